// The runtime re-checks reported survivors on every read: a run keeps its active slot exactly until the
// processes the supervisor could not end are proven gone (same pid and start time), never before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createRuntime } from '../../lib/tools/runtime.ts';
import { createSessionLock } from '../../lib/runs/session-lock.ts';
import { createManualClock } from '../helpers/manual-clock.ts';
import { isToolError } from '../../lib/tool-errors.ts';
import type { PreparedSupervisor, SupervisedOutcome } from '../../lib/supervisor/parent/run-supervised.ts';
import type { ProcessIdentity } from '../../lib/supervisor/protocol.ts';

const SURVIVOR: ProcessIdentity = { pid: 424242, start: '777' };

function fakeSupervisor(survivors: readonly ProcessIdentity[]): PreparedSupervisor {
  const result = JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: false,
    result: 'ok',
    session_id: '11111111-2222-4333-8444-555555555555',
  });
  const outcome: SupervisedOutcome = {
    spawned: { pid: 1, start: '1' },
    versionProof: 'file',
    spawnError: null,
    exit: { code: 0, signal: null },
    cleanup: {
      type: 'cleanup',
      confirmed: survivors.length === 0,
      survivors,
      survivors_omitted: 0,
      steps: [],
      error: null,
      stderr_tail: '',
      stderr_bytes: 0,
      proof: 'process_scan',
    },
    supervisorExit: { code: 0, signal: null },
    stderrTail: '',
    stderrBytes: 0,
    fallbackKilled: 0,
    fallbackLeft: 0,
    fallbackError: null,
    fallbackProof: null,
    fallbackSource: 'process_scan',
    crashText: null,
  };
  return {
    supervisorPid: 99,
    cgroup: null,
    exited: Promise.resolve(),
    dispose: () => Promise.resolve(outcome),
    kill: () => {},
    probedFile: () => undefined,
    probedImage: () => undefined,
    probe: () =>
      Promise.resolve({ kind: 'exited', code: 0, signal: null, stdout: '2.1.332 (Claude Code)\n', stdoutOverflow: false, stderr: '' }),
    start: (_spec, hooks) => {
      queueMicrotask(() => hooks.onStdout(Buffer.from(`${result}\n`)));
      return {
        supervisorPid: 99,
        terminate: () => {},
        killSupervisor: () => {},
        input: () => false,
        endInput: () => {},
        done: new Promise((resolve) => setTimeout(() => resolve(outcome), 5)),
      };
    },
  };
}

test('a run settled with a survivor stays uncertain until the survivor is gone, then can be released', async () => {
  let survivorAlive = true;
  const runtime = createRuntime({
    clock: createManualClock(),
    random: (n) => randomBytes(n),
    checkVersion: async () => {},
    prepareSupervisor: () => fakeSupervisor([SURVIVOR]),
    isGone: (id) => !(survivorAlive && id.pid === SURVIVOR.pid && id.start === SURVIVOR.start),
    sessionLock: createSessionLock(),
    listSessionIds: () => [],
    nativeEnv: {},
  });
  const request = {
    prompt: 'x',
    cwd: '/',
    permissionMode: 'dontAsk' as const,
    nativeOptions: {},
    session: { kind: 'fresh' as const },
    timeoutMs: 60_000,
    idleTimeoutMs: null,
  };
  const entry = runtime.start(
    { request, bin: '/bin/true', argv: { args: [], stdin: 'x', streamInput: false } },
    { acquiredBy: null, sync: false },
  );
  await entry.live.settled;
  const before = runtime.resultOf(entry);
  assert.equal(before.cleanup_confirmed, false);
  assert.equal(before.error?.code, 'cleanup_unconfirmed');
  assert.equal(runtime.registry.counts().active, 1, 'the uncertain run keeps an active slot');
  assert.throws(
    () => runtime.release(entry.run_id),
    (e) => isToolError(e) && e.code === 'cleanup_unconfirmed',
  );

  survivorAlive = false;
  const after = runtime.resultOf(entry);
  assert.equal(after.cleanup_confirmed, true);
  assert.equal(after.cleanup_error, null);
  assert.equal(runtime.registry.counts().active, 0, 'the slot is free once the survivor is proven gone');
  assert.equal(runtime.release(entry.run_id).run_id, entry.run_id);
  await runtime.close();
});
