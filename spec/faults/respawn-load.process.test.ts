/**
 * A process that never stays put, on a loaded machine: it keeps the run's marker but forks into a new
 * session every 50 ms while its parent exits, and ignores everything but SIGKILL. With 1,500 idle processes
 * and busy loops on the machine a /proc scan lasts longer than one of its generations, so a scan can list a
 * generation that is gone by the time it is read while its child, born after the listing, is in no list at
 * all. Each run must end it, or say honestly that it could not prove the end: never "confirmed" while it lives.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { startFake } from '../supervisor/harness.ts';
import { aliveNaming, killPids } from './escape-helpers.ts';
import { readReadyLines, waitFor } from '../helpers/proc.ts';
import { startMachineLoad, type MachineLoad } from '../../scripts/bench/machine-load.ts';
import { BACKENDS, type NamedBackend } from '../helpers/backends.ts';
import { specSupervision } from '../helpers/bundle.ts';

const RUNS = 20;
const RUNS_AT_ONCE = 10;
const MACHINE_PROCESSES = 1_500;
const BUSY_LOOPS = 2;
/** Short ladder steps: the proof, not the grace, is under test, and 20 runs must fit in the test's timeout. */
const LADDER = { interruptGraceMs: 100, termGraceMs: 200, killGraceMs: 400 };
/** flock(1) exits with this when the lock is held. */
const LOCKED_STATUS = 75;

let load: MachineLoad | null = null;

// The load dies with this process too (its perl parent ends it when the pipe from here closes).
before(async () => {
  load = await startMachineLoad(MACHINE_PROCESSES, BUSY_LOOPS);
});

after(async () => {
  await load?.stop();
});

/**
 * Whether any generation of the chain lives: each holds the flock it inherited, so the lock is free exactly when
 * none does. A /proc scan could not say: it misses a chain that moves faster than the scan reads.
 */
function chainAlive(readyFile: string): boolean {
  return spawnSync('flock', ['-n', '-E', String(LOCKED_STATUS), `${readyFile}.lock`, 'true']).status === LOCKED_STATUS;
}

/** Ends a respawning chain whatever happened: its stop file, then SIGKILL until its lock is free. */
async function endChain(readyFile: string): Promise<void> {
  writeFileSync(`${readyFile}.stop`, '');
  await waitFor(
    'the respawning chain gone',
    () => {
      if (!chainAlive(readyFile)) return true;
      killPids(aliveNaming(readyFile));
      return false;
    },
    20_000,
  );
}

/** One run: what its cleanup report said, against whether the chain really lived when the run settled. */
async function oneRun(backend: NamedBackend): Promise<string> {
  // The runner's bundle supervisor (a third of a source-mode start's CPU): 40 of them start on a loaded machine.
  const fake = startFake('escape', {
    env: { FAKE_CLAUDE_ESCAPE: 'respawn' },
    spec: { ...LADDER, ...specSupervision() },
    cleanup: backend.cleanup(),
  });
  try {
    const outcome = await fake.run.done;
    const alive = chainAlive(fake.readyFile);
    const confirmed = outcome.cleanup?.confirmed === true;
    // The escape really happened: the chain announced itself before the native exited.
    assert.equal(readReadyLines(fake.readyFile).filter((l) => l.ready === 'escapee').length, 1);
    const label = alive ? (confirmed ? 'CONFIRMED-WHILE-ALIVE' : 'unconfirmed') : confirmed ? 'ended' : 'ended-unconfirmed';
    // An unproven run says why (its steps and error), so a failure names the step that ran out.
    return label === 'ended'
      ? label
      : `${label}[${outcome.cleanup?.steps.join(',') ?? 'no report'}: ${outcome.cleanup?.error ?? 'no error'}]`;
  } finally {
    await endChain(fake.readyFile);
    fake.dispose();
  }
}

for (const backend of BACKENDS) {
  test(`${backend.name}: a marker-carrying process re-spawning into new sessions every 50 ms, ${MACHINE_PROCESSES} processes and ${BUSY_LOOPS} busy loops on the machine: ${backend.name === 'cgroup' ? 'ended and proven' : 'never confirmed while it lives'} (${RUNS} runs)`, async () => {
    const outcomes: string[] = [];
    // A few runs at a time: each waits mostly on process starts, and 20 in a row would not fit the file's timeout.
    for (let i = 0; i < RUNS; i += RUNS_AT_ONCE) {
      outcomes.push(...(await Promise.all(Array.from({ length: Math.min(RUNS_AT_ONCE, RUNS - i) }, () => oneRun(backend)))));
    }
    process.stderr.write(`respawn under load (${backend.name}): ${outcomes.join(' ')}\n`);
    assert.equal(outcomes.filter((o) => o.startsWith('CONFIRMED-WHILE-ALIVE')).length, 0, outcomes.join(' '));
    // The cgroup holds every generation, however fast it moves: cgroup.kill ends them all and the kernel says so.
    if (backend.name === 'cgroup')
      assert.deepEqual(
        outcomes.filter((o) => o !== 'ended'),
        [],
        outcomes.join(' '),
      );
  });
}
