/** createSparePool(): one warm idle supervisor, handed to exactly one run, refilled after it, ended on close. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareSupervisor, type PreparedSupervisor } from '../../../lib/supervisor/parent/run-supervised.ts';
import { createSparePool } from '../../../lib/supervisor/parent/spare.ts';
import { getSupervisorCommand } from '../../../lib/supervisor/parent/supervisor-command.ts';
import { identify, isRunning, waitFor, waitForGone } from '../../helpers/proc.ts';
import { baseEnv, FAKE_CLAUDE, stdoutEvents } from '../harness.ts';

const RUN_ARGS = ['-p', '--output-format', 'stream-json', '--verbose', '--', 'hi'];

/** Counts the supervisors the pool prepared, so each test can account for every one it started. */
function counting(): { prepare: typeof prepareSupervisor; prepared: PreparedSupervisor[] } {
  const prepared: PreparedSupervisor[] = [];
  return {
    prepared,
    prepare: (command) => {
      const s = prepareSupervisor(command);
      prepared.push(s);
      return s;
    },
  };
}

async function runOn(supervisor: PreparedSupervisor): Promise<void> {
  const chunks: Buffer[] = [];
  const run = supervisor.start(
    { file: FAKE_CLAUDE, args: RUN_ARGS, cwd: '/', env: baseEnv(), stdin: null },
    {
      onStdout: (c) => {
        chunks.push(c);
      },
    },
  );
  const outcome = await run.done;
  assert.equal(outcome.cleanup?.confirmed, true);
  assert.equal(stdoutEvents(Buffer.concat(chunks)).at(-1)?.['type'], 'result');
  await supervisor.exited;
}

test('warm prepares one idle spare; take hands it out once; the next spare boots only after that run ended', async () => {
  const { prepare, prepared } = counting();
  const pool = createSparePool(prepare);
  try {
    pool.warm();
    pool.warm(); // no second spare
    assert.equal(prepared.length, 1);
    const sparePid = pool.sparePid();
    assert.ok(sparePid !== null);
    const spareId = identify(sparePid);
    assert.ok(spareId !== null && isRunning(spareId), 'the spare runs while idle');

    const first = pool.take();
    assert.equal(first.supervisorPid, sparePid, 'the run got the warm spare');
    assert.equal(pool.sparePid(), null, 'a taken spare is no longer the spare');
    const second = pool.take();
    assert.notEqual(second.supervisorPid, sparePid, 'never handed out twice');
    assert.equal(prepared.length, 2);
    // The version probe and the run go through the spare like any prepared supervisor.
    const probe = await first.probe({
      file: FAKE_CLAUDE,
      args: ['--version'],
      cwd: '/',
      env: baseEnv(),
      timeoutMs: 10_000,
      maxStdoutBytes: 4096,
    });
    assert.equal(probe.kind, 'exited');
    await runOn(first);
    await runOn(second);
    // Both runs ended: exactly one new spare, not one per run.
    const next = await waitFor('a new spare after the runs', () => pool.sparePid() ?? undefined);
    assert.notEqual(next, sparePid);
    assert.equal(prepared.length, 3);
  } finally {
    await pool.close();
  }
  // close ended the idle spare and prepared nothing more.
  assert.equal(pool.sparePid(), null);
  for (const s of prepared) await s.exited;
  pool.warm();
  assert.equal(prepared.length, 3, 'no spare after close');
});

test('close ends an idle spare: the process is gone when close resolves', async () => {
  const pool = createSparePool(prepareSupervisor);
  pool.warm();
  const pid = pool.sparePid();
  assert.ok(pid !== null);
  const id = identify(pid);
  assert.ok(id !== null);
  await pool.close();
  assert.equal(isRunning(id), false);
  await pool.close(); // idempotent
});

test('stop ends the idle spare at once (SIGKILL: it has started nothing)', async () => {
  const pool = createSparePool(prepareSupervisor);
  pool.warm();
  const pid = pool.sparePid();
  assert.ok(pid !== null);
  const id = identify(pid);
  assert.ok(id !== null);
  pool.stop();
  assert.equal(pool.sparePid(), null);
  await waitForGone([id]);
  await pool.close();
});

test('a spare that died while idle is dropped, not respawned; the next run gets a fresh supervisor', async () => {
  const { prepare, prepared } = counting();
  const pool = createSparePool(prepare);
  try {
    pool.warm();
    const spare = prepared[0];
    assert.ok(spare !== undefined && spare.supervisorPid !== null);
    process.kill(spare.supervisorPid, 'SIGKILL');
    await spare.exited;
    assert.equal(pool.sparePid(), null);
    assert.equal(prepared.length, 1, 'no respawn of a killed spare');
    const fresh = pool.take();
    assert.notEqual(fresh.supervisorPid, spare.supervisorPid);
    await runOn(fresh);
  } finally {
    await pool.close();
  }
});

test('a run with another supervisor command never gets the spare', async () => {
  const { prepare, prepared } = counting();
  const pool = createSparePool(prepare);
  try {
    pool.warm();
    const sparePid = pool.sparePid();
    const other = { file: process.execPath, args: [...getSupervisorCommand().args] };
    const taken = pool.take(other);
    assert.notEqual(taken.supervisorPid, sparePid);
    assert.equal(pool.sparePid(), sparePid, 'the spare stays for the default command');
    await taken.dispose();
    await taken.exited;
  } finally {
    await pool.close();
  }
  for (const s of prepared) await s.exited;
});
