/**
 * A version answer counts only for the directory it was asked in and for the executable that gave it,
 * with real machine-code programs (built here with cc): version managers' shims that pick the version by
 * directory and by their own configuration (an upgrade behind an unchanged shim), a plain binary, and a
 * bin link re-pointed between two binaries while runs start.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { prepareSupervisor, type PreparedSupervisor, type ProbeSpec } from '../../../lib/supervisor/parent/run-supervised.ts';
import { createSparePool } from '../../../lib/supervisor/parent/spare.ts';
import { fileIdentity } from '../../../lib/supervisor/file-id.ts';
import { SPAWN_ERROR_FILE_CHANGED } from '../../../lib/supervisor/protocol.ts';
import { nativeImageMismatch, pinFile } from '../../../lib/supervisor/child/exe-check.ts';
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { makeElfShims, type ElfShims, type ShimKind } from '../../helpers/elf-shims.ts';
import { pollUntil } from '../../helpers/poll.ts';
import { counting } from '../../helpers/counting-supervisors.ts';

const TESTED = '2.1.332';
const OTHER = '9.9.9';
/** Runs started under the flipping link (EXE_BINDING_TRIALS to measure with more). */
const TRIALS = Number(process.env['EXE_BINDING_TRIALS'] ?? 12);
const answer = (v: string): string => `${v} (Claude Code)\n`;
const versionProbe = (file: string, cwd: string): ProbeSpec => ({
  file,
  args: ['--version'],
  cwd,
  env: { PATH: '/usr/bin:/bin' },
  timeoutMs: 10_000,
  maxStdoutBytes: 4096,
});

let shims: ElfShims;
let serverDir: string;
before(() => {
  shims = makeElfShims();
  shims.setDefault(TESTED);
  serverDir = join(shims.home, 'server');
  mkdirSync(serverDir);
  shims.relink(join(shims.home, 'bin', 'claude'), shims.version(TESTED));
});
after(() => {
  shims.cleanup();
});

/** A pool whose spare asked `file` for its version in the server's directory; `use` takes it from there. */
async function withEarlyAnswer(file: string, use: (supervisor: PreparedSupervisor, probes: ProbeSpec[]) => Promise<void>): Promise<void> {
  const { prepare, probes, prepared } = counting();
  const pool = createSparePool(prepare, { earlyProbe: () => versionProbe(file, serverDir) });
  let taken: PreparedSupervisor | null = null;
  try {
    pool.warm();
    await pollUntil("the spare's early answer", () => prepared[0]?.probedFile(file) !== undefined, { timeoutMs: 15_000 });
    taken = pool.take();
    await use(taken, probes);
  } finally {
    // Also when `use` failed: a taken supervisor left running keeps this file alive until its deadline.
    if (taken !== null) {
      await taken.dispose();
      await taken.exited;
    }
    shims.setDefault(TESTED);
    await pool.close();
  }
}

const cases: readonly [ShimKind, 'a pinned directory' | 'an upgrade behind the shim'][] = [
  ['exec', 'a pinned directory'],
  ['exec', 'an upgrade behind the shim'],
  ['fork', 'a pinned directory'],
  ['fork', 'an upgrade behind the shim'],
];
for (const [kind, change] of cases) {
  test(`a shim that ${kind === 'exec' ? 'execs' : 'forks and waits for'} the version it picks, ${change}: the early answer is not reused, the run asks again`, () =>
    withEarlyAnswer(shims.shim(kind), async (supervisor, probes) => {
      const shim = shims.shim(kind);
      // The early answer was the shim's pick in the server's directory, given by another program than the file.
      assert.equal(supervisor.probedFile(shim), fileIdentity(shim));
      assert.notEqual(supervisor.probedImage(shim), supervisor.probedFile(shim), "the answer was not the file's own");
      let cwd = serverDir;
      if (change === 'a pinned directory') cwd = shims.pinnedDir(OTHER);
      else shims.setDefault(OTHER);
      const outcome = await supervisor.probe(versionProbe(shim, cwd));
      assert.ok(outcome.kind === 'exited');
      assert.equal(outcome.stdout, answer(OTHER), "the run's own answer: what the shim runs now, here");
      assert.equal(probes.length, 2, 'asked again');
    }));
}

test('a plain binary (a bin link to the file, as the native installer makes it): the early answer serves a run in the same directory, and the run starts', () =>
  withEarlyAnswer(join(shims.home, 'bin', 'claude'), async (supervisor, probes) => {
    const link = join(shims.home, 'bin', 'claude');
    assert.equal(supervisor.probedImage(link), fileIdentity(link), 'the file answered itself');
    const outcome = await supervisor.probe(versionProbe(link, serverDir));
    assert.deepEqual(outcome, { kind: 'exited', code: 0, signal: null, stdout: answer(TESTED), stdoutOverflow: false, stderr: '' });
    assert.equal(probes.length, 1, 'the early answer was used');
    const chunks: Buffer[] = [];
    const run = supervisor.start(
      { file: link, args: ['-p', 'hi'], cwd: serverDir, env: { PATH: '/usr/bin:/bin' }, stdin: null },
      {
        onStdout: (c) => {
          chunks.push(c);
        },
      },
    );
    const done = await run.done;
    assert.equal(done.spawnError, null);
    assert.equal(done.cleanup?.confirmed, true);
    assert.match(Buffer.concat(chunks).toString(), /"result":"2\.1\.332"/);
  }));

test("a plain binary asked early in the server's directory: a run in another directory asks again", () =>
  withEarlyAnswer(join(shims.home, 'bin', 'claude'), async (supervisor, probes) => {
    const outcome = await supervisor.probe(versionProbe(join(shims.home, 'bin', 'claude'), shims.pinnedDir(TESTED)));
    assert.equal(outcome.kind, 'exited');
    assert.equal(probes.length, 2);
  }));

test('a bin link pointed at another binary one millisecond in four: no run ever executes the one that was not checked', async (t) => {
  const link = join(shims.home, 'bin', 'flipping');
  const good = shims.version(TESTED);
  const bad = shims.version('6.6.6');
  shims.relink(link, good);
  let flips = 0;
  const flipper = setInterval(() => {
    shims.relink(link, ++flips % 4 === 0 ? bad : good);
  }, 1);
  const tally = { refusedByVersion: 0, nativeChanged: 0, unbound: 0, ran: 0 };
  try {
    for (let trial = 0; trial < TRIALS; trial++) {
      const supervisor = prepareSupervisor();
      const checked = await supervisor.probe(versionProbe(link, serverDir));
      if (checked.kind !== 'exited' || checked.stdout !== answer(TESTED)) {
        tally.refusedByVersion++;
        await supervisor.dispose();
        continue;
      }
      if (supervisor.probedFile(link) === null) {
        tally.unbound++;
        await supervisor.dispose();
        continue;
      }
      const done = await supervisor.start(
        { file: link, args: ['-p', `trial-${trial}`], cwd: serverDir, env: { PATH: '/usr/bin:/bin' }, stdin: null },
        { onStdout: () => {} },
      ).done;
      if (done.spawnError?.code === SPAWN_ERROR_FILE_CHANGED) tally.nativeChanged++;
      else tally.ran++;
      assert.equal(done.cleanup?.confirmed, true);
    }
  } finally {
    clearInterval(flipper);
  }
  const unchecked = shims.records().filter((r) => r.version === '6.6.6' && !r.argv.includes('--version'));
  assert.deepEqual(unchecked, [], `tally ${JSON.stringify(tally)}`);
  assert.ok(tally.ran > 0, `some runs started: ${JSON.stringify(tally)}`);
  t.diagnostic(`flips ${flips}, ${JSON.stringify(tally)}`);
});

/** Blocks (so Node cannot reap it) until `pid` is a zombie; the bound is for a machine that never runs it. */
function blockUntilZombie(pid: number, boundMs = 30_000): void {
  const deadline = Date.now() + boundMs;
  while (Date.now() < deadline) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return;
  }
  assert.fail(`process ${pid} did not exit within ${boundMs} ms`);
}

test("the image check after spawn: a native that already exited (a zombie shows no image) ran the pinned file, unless it bears another file's name", () => {
  const pinned = pinFile('/bin/true');
  assert.ok(pinned !== null && pinned.machineCode && pinned.execName !== null, "an ELF file, exec'd through a private link");
  const child = spawn(pinned.execPath, [], { argv0: '/bin/true', stdio: 'ignore' });
  pinned.release();
  assert.ok(child.pid !== undefined);
  blockUntilZombie(child.pid);
  assert.equal(nativeImageMismatch(child.pid, pinned, pinned.id, null), null, "exec'd through the pinned link, renamed by nothing since");
  assert.match(
    nativeImageMismatch(child.pid, { ...pinned, execName: 'other' }, pinned.id, null) ?? '',
    /exited before its image could be read/,
  );
  assert.match(
    nativeImageMismatch(child.pid, { id: pinned.id, machineCode: true }, pinned.id, null) ?? '',
    /exited before its image could be read/,
  );
});

test('the image check after spawn: a process running another executable than the checked one is a mismatch', async () => {
  const ran = process.execPath; // machine code that stays up until killed
  const other = shims.version(OTHER);
  const child = spawn(ran, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  try {
    assert.ok(child.pid !== undefined);
    const checked = { id: fileIdentity(ran) ?? '', machineCode: true };
    assert.equal(nativeImageMismatch(child.pid, checked, fileIdentity(ran), null), null, 'the checked file runs');
    assert.equal(nativeImageMismatch(child.pid, checked, fileIdentity(other), fileIdentity(ran)), null, "the image a launcher exec'd");
    assert.match(nativeImageMismatch(child.pid, checked, fileIdentity(other), null) ?? '', /another executable/);
    assert.equal(
      nativeImageMismatch(child.pid, { ...checked, machineCode: false }, fileIdentity(other), null),
      null,
      'a script is not held to its image',
    );
  } finally {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
});

/** One probe then the run of `file`, by a supervisor told `platform`: what the run's version proof says. */
async function proofOf(file: string, platform: 'linux' | 'darwin'): Promise<string | null> {
  const cleanup = { kind: 'process_scan', reason: 'forced_off', detail: 'spec' } as const;
  const supervisor = prepareSupervisor(undefined, { platform, cleanup });
  const probed = await supervisor.probe(versionProbe(file, serverDir));
  assert.equal(probed.kind === 'exited' && probed.stdout, answer(TESTED));
  const run = supervisor.start(
    { file, args: ['-p', 'hi'], cwd: serverDir, env: { PATH: '/usr/bin:/bin' }, stdin: null },
    { onStdout: () => {} },
  );
  const outcome = await run.done;
  assert.equal(outcome.cleanup?.confirmed, true);
  return outcome.versionProof;
}

test('version_proof: a plain binary is bound to its image on Linux, to its file only when the supervisor is told darwin', async () => {
  const binary = shims.version(TESTED);
  assert.equal(await proofOf(binary, 'linux'), 'image');
  assert.equal(await proofOf(binary, 'darwin'), 'file', 'no /proc on darwin: never more than the file');
});

test('version_proof: a script, which its interpreter opens again by path, gets "file" at most on Linux too', async () => {
  const script = join(shims.home, 'claude-script');
  const { writeFileSync, chmodSync } = await import('node:fs');
  writeFileSync(script, `#!/bin/sh\necho '${answer(TESTED).trim()}'\n`);
  chmodSync(script, 0o755);
  assert.equal(await proofOf(script, 'linux'), 'file');
});
