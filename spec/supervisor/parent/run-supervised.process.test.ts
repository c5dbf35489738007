/** startSupervised + supervisor against the real process table, driven by fixtures/fake-claude.mjs. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { identify, isRunning, killIfRunning, readReadyLines, waitFor, waitForGone, waitForReady } from '../../helpers/proc.ts';
import { startFake, stdoutEvents } from '../harness.ts';
import type { ProcessIdentity } from '../../../lib/supervisor/protocol.ts';
import { BACKENDS, PROCESS_SCAN } from '../../helpers/backends.ts';
import { cgroupMembers, runCgroupDir } from '../../../lib/process/cgroup.ts';
import { existsSync } from 'node:fs';

const FAST = { interruptGraceMs: 1500, termGraceMs: 800, killGraceMs: 800, trackIntervalMs: 50 };

test('normal exit: stdout relayed, exit reported, cleanup confirmed, native gone', async () => {
  const fake = startFake('ok');
  try {
    const outcome = await fake.run.done;
    assert.deepEqual(outcome.exit, { code: 0, signal: null });
    assert.equal(outcome.cleanup?.confirmed, true);
    assert.deepEqual(outcome.cleanup?.survivors, []);
    assert.equal(outcome.fallbackKilled, 0);
    assert.ok(
      outcome.supervisorExit === null || (outcome.supervisorExit.code === 0 && outcome.supervisorExit.signal === null),
      JSON.stringify(outcome.supervisorExit),
    );
    assert.ok(outcome.spawned);
    assert.equal(isRunning(outcome.spawned), false);
    const events = stdoutEvents(fake.stdout());
    assert.equal(events.at(-1)?.['type'], 'result');
    assert.equal(events[0]?.['subtype'], 'init');
    assert.deepEqual(
      fake.reports.map((r) => r.type),
      ['spawned', 'exit', 'cleanup'],
    );
  } finally {
    fake.dispose();
  }
});

for (const backend of BACKENDS)
  test(`${backend.name}: a grandchild holding native stdout open is ended after the native exit`, async () => {
    const fake = startFake('grandchild_holds_stdout', { spec: FAST, cleanup: backend.cleanup() });
    let grandchild: ProcessIdentity | null = null;
    try {
      // The native ends its turn at once: its cleanup may end the grandchild before this look (then null).
      const line = await waitFor('ready "grandchild"', () => readReadyLines(fake.readyFile).find((l) => l.ready === 'grandchild'));
      grandchild = identify(line.pid);
      const outcome = await fake.run.done;
      assert.deepEqual(outcome.exit, { code: 0, signal: null });
      assert.equal(outcome.cleanup?.confirmed, true, JSON.stringify(outcome.cleanup));
      assert.ok(outcome.cleanup?.steps.includes('SIGTERM:group'));
      assert.equal(outcome.cleanup?.proof, backend.name);
      assert.equal(grandchild !== null && isRunning(grandchild), false);
      assert.equal(stdoutEvents(fake.stdout()).at(-1)?.['type'], 'result');
    } finally {
      killIfRunning([grandchild]);
      fake.dispose();
    }
  });

test('a setsid child (own session, like the Bash tool) is tracked and ended after a normal exit', async () => {
  const fake = startFake('setsid_child', { spec: FAST, env: { FAKE_CLAUDE_HOLD_MS: '400' } });
  let child: ProcessIdentity | null = null;
  try {
    child = await waitForReady(fake.readyFile, 'setsid');
    const outcome = await fake.run.done;
    assert.deepEqual(outcome.exit, { code: 0, signal: null });
    assert.equal(outcome.cleanup?.confirmed, true, JSON.stringify(outcome.cleanup));
    assert.ok(outcome.cleanup?.steps.includes('SIGTERM:1'), JSON.stringify(outcome.cleanup?.steps));
    assert.equal(isRunning(child), false);
  } finally {
    killIfRunning([child]);
    fake.dispose();
  }
});

test('terminate: SIGINT yields the native final error result, and the setsid child is ended too', async () => {
  const fake = startFake('setsid_child', { spec: FAST, env: { FAKE_CLAUDE_HOLD_MS: 'hang' } });
  let child: ProcessIdentity | null = null;
  try {
    child = await waitForReady(fake.readyFile, 'setsid');
    const native = await waitForReady(fake.readyFile, 'native');
    // No waiting for a poll: the ladder scans the intact tree before it sends SIGINT.
    fake.run.terminate('cancel');
    const outcome = await fake.run.done;
    assert.deepEqual(outcome.exit, { code: 0, signal: null });
    assert.deepEqual(outcome.cleanup?.steps.slice(0, 2), ['terminate:cancel', 'SIGINT:native']);
    assert.equal(outcome.cleanup?.confirmed, true, JSON.stringify(outcome.cleanup));
    const final = stdoutEvents(fake.stdout()).at(-1);
    assert.equal(final?.['subtype'], 'error_during_execution');
    assert.equal(final?.['terminal_reason'], 'aborted_streaming');
    assert.equal(isRunning(child), false);
    assert.equal(isRunning(native), false);
  } finally {
    killIfRunning([child]);
    fake.dispose();
  }
});

for (const backend of BACKENDS)
  test(`${backend.name}: sigint_result: terminate gives the final result and needs no SIGTERM`, async () => {
    const fake = startFake('sigint_result', { spec: FAST, cleanup: backend.cleanup() });
    try {
      await waitForReady(fake.readyFile, 'handlers');
      const started = performance.now();
      fake.run.terminate('timeout');
      fake.run.terminate('cancel');
      const outcome = await fake.run.done;
      assert.ok(performance.now() - started < FAST.interruptGraceMs, 'ended within the interrupt grace');
      assert.deepEqual(outcome.cleanup?.steps, [
        'terminate:timeout',
        'SIGINT:native',
        ...(backend.name === 'cgroup' ? ['cgroup:empty'] : []),
      ]);
      assert.equal(outcome.cleanup?.confirmed, true);
      assert.deepEqual(outcome.exit, { code: 0, signal: null });
      const final = stdoutEvents(fake.stdout()).at(-1);
      assert.equal(final?.['type'], 'result');
      assert.equal(final?.['is_error'], true);
    } finally {
      fake.dispose();
    }
  });

for (const backend of BACKENDS)
  test(`${backend.name}: a native process that ignores SIGINT and SIGTERM is escalated to SIGKILL`, async () => {
    const fake = startFake('ignore_sigterm', { spec: { ...FAST, interruptGraceMs: 300, termGraceMs: 300 }, cleanup: backend.cleanup() });
    try {
      const native = await waitForReady(fake.readyFile, 'handlers');
      fake.run.terminate('cancel');
      const outcome = await fake.run.done;
      assert.deepEqual(outcome.exit, { code: null, signal: 'SIGKILL' });
      const kill = backend.name === 'cgroup' ? ['cgroup.kill', 'cgroup:empty'] : ['SIGKILL:1'];
      assert.deepEqual(outcome.cleanup?.steps, ['terminate:cancel', 'SIGINT:native', 'SIGTERM:group', 'SIGTERM:0', ...kill]);
      assert.equal(outcome.cleanup?.confirmed, true);
      assert.equal(isRunning(native), false);
    } finally {
      fake.dispose();
    }
  });

test('hang_after_result: the final event stays relayed when the run is ended afterwards', async () => {
  const fake = startFake('hang_after_result', { spec: FAST });
  try {
    await waitForReady(fake.readyFile, 'result');
    fake.run.terminate('timeout');
    const outcome = await fake.run.done;
    assert.equal(outcome.cleanup?.confirmed, true);
    const results = stdoutEvents(fake.stdout()).filter((e) => e['type'] === 'result');
    assert.equal(results.length, 1);
  } finally {
    fake.dispose();
  }
});

test('the native environment is exactly the one given, plus the run marker', async () => {
  const fake = startFake('ok', { env: { ONLY_THIS: 'yes' } });
  try {
    const outcome = await fake.run.done;
    assert.equal(outcome.cleanup?.confirmed, true);
    const record = fake.record();
    // Node itself copies NODE_V8_COVERAGE into every child it spawns while coverage is being collected.
    const keys = Object.keys(record.env)
      .filter((key) => key !== 'NODE_V8_COVERAGE' || process.env['NODE_V8_COVERAGE'] === undefined)
      .sort();
    assert.deepEqual(keys, [
      'CLAUDE_RUN_MCP_RUN_MARKER',
      'FAKE_CLAUDE_READY_FILE',
      'FAKE_CLAUDE_RECORD',
      'FAKE_CLAUDE_SCENARIO',
      'ONLY_THIS',
      'PATH',
    ]);
    assert.match(record.env['CLAUDE_RUN_MCP_RUN_MARKER'] ?? '', /^[0-9a-f]{32}$/);
    assert.deepEqual(record.argv, ['-p', '--output-format', 'stream-json', '--verbose', '--', 'hello']);
    assert.equal(record.stdin, null, 'stdin is /dev/null when no prompt is piped');
    assert.ok(record.fds, 'the record lists the descriptors');
    assert.deepEqual(
      record.fds.slice(0, 3).map((f) => f.fd),
      [0, 1, 2],
    );
    // Descriptors above 2 that lack O_CLOEXEC survived an exec: they were inherited, not opened by node.
    assert.deepEqual(
      record.fds.filter((f) => f.fd > 2 && f.cloexec !== true),
      [],
    );
  } finally {
    fake.dispose();
  }
});

test('a stdin prompt is delivered and closed: no 3 s wait', async () => {
  const prompt = 'prompt via stdin\nsecond line ✓';
  const fake = startFake('ok', { stdin: prompt, args: ['-p', '--output-format', 'json'] });
  try {
    const outcome = await fake.run.done;
    // The fake, like the real CLI, warns after waiting 3 s on an open empty stdin; no warning means no wait
    // (a wall-clock bound here would only measure the machine's load).
    assert.equal(fake.record().stdin, prompt);
    assert.doesNotMatch(outcome.stderrTail, /no stdin data/);
    assert.equal(stdoutEvents(fake.stdout()).length, 1);
  } finally {
    fake.dispose();
  }
});

test('a missing native binary is a spawn_error with confirmed (empty) cleanup', async () => {
  const { startSupervised } = await import('../../../lib/supervisor/parent/run-supervised.ts');
  const run = startSupervised({ file: '/nonexistent/claude', args: [], cwd: '/', env: {}, stdin: null }, { onStdout: () => {} });
  const outcome = await run.done;
  assert.equal(outcome.spawned, null);
  assert.equal(outcome.spawnError?.code, 'ENOENT');
  assert.equal(outcome.exit, null);
  assert.equal(outcome.cleanup?.confirmed, true);
});

test('a supervisor that crashes: its uncaught exception is kept (bounded) and named in the outcome, never taken for a report', async () => {
  const { startSupervised } = await import('../../../lib/supervisor/parent/run-supervised.ts');
  const { UNPARSED_TAIL_MAX_BYTES } = await import('../../../lib/supervisor/parent/report-reader.ts');
  // A stand-in supervisor that writes more than the bound of noise, then dies of an uncaught exception.
  const crash = `process.stderr.write('x'.repeat(${UNPARSED_TAIL_MAX_BYTES * 2}) + '\\n'); throw new TypeError('the supervisor broke');`;
  // `--`: the platform argument every supervisor command gets appended is the script's, not node's option.
  const supervisorCommand = { file: process.execPath, args: ['-e', crash, '--'] };
  const run = startSupervised(
    { file: '/nonexistent/claude', args: [], cwd: '/', env: {}, stdin: null, supervisorCommand },
    { onStdout: () => {} },
    { cleanup: PROCESS_SCAN },
  );
  const outcome = await run.done;
  assert.equal(outcome.cleanup, null);
  assert.deepEqual(outcome.supervisorExit, { code: 1, signal: null });
  assert.match(outcome.crashText ?? '', /TypeError: the supervisor broke/);
  assert.ok(Buffer.byteLength(outcome.crashText ?? '') <= UNPARSED_TAIL_MAX_BYTES, 'the crash text is bounded');
});

test('process_scan: supervisor SIGKILL: no report, so cleanup stays null and the adapter kills the native itself', async () => {
  const fake = startFake('sigint_result', { spec: FAST, cleanup: PROCESS_SCAN });
  let native: ProcessIdentity | null = null;
  try {
    native = await waitForReady(fake.readyFile, 'handlers');
    const supervisor = identify(fake.run.supervisorPid ?? -1);
    assert.ok(supervisor);
    process.kill(supervisor.pid, 'SIGKILL');
    const outcome = await fake.run.done;
    assert.equal(outcome.cleanup, null);
    assert.deepEqual(outcome.supervisorExit, { code: null, signal: 'SIGKILL' });
    assert.ok(outcome.fallbackKilled >= 1);
    assert.equal(outcome.fallbackProof, null);
    await waitForGone([native], 2000);
  } finally {
    killIfRunning([native]);
    fake.dispose();
  }
});

test("cgroup: supervisor SIGKILL: no report, the adapter ends the run's cgroup and the kernel proves it empty", async () => {
  const cleanup = BACKENDS[0]?.cleanup();
  assert.ok(cleanup?.kind === 'cgroup');
  const fake = startFake('sigint_result', { spec: FAST, cleanup });
  let native: ProcessIdentity | null = null;
  try {
    native = await waitForReady(fake.readyFile, 'handlers');
    const supervisor = identify(fake.run.supervisorPid ?? -1);
    assert.ok(supervisor);
    const dir = runCgroupDir(cleanup.base, supervisor);
    assert.ok(dir !== null);
    // The native was born inside the run's cgroup, the supervisor is not in it.
    assert.deepEqual(cgroupMembers(dir), [native.pid]);
    process.kill(supervisor.pid, 'SIGKILL');
    const outcome = await fake.run.done;
    assert.equal(outcome.cleanup, null);
    assert.equal(outcome.fallbackProof, 'cgroup');
    assert.equal(isRunning(native), false);
    assert.equal(existsSync(dir), false, "the run's cgroup was removed");
  } finally {
    killIfRunning([native]);
    fake.dispose();
  }
});
