// A worktree name is claimed by the run that asked for it until that run settles: a second run asking for
// the same one is refused at /worktree, before it reserves or spawns anything, without echoing the name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createRuntime } from '../../lib/tools/runtime.ts';
import { createSessionLock } from '../../lib/runs/session-lock.ts';
import { isToolError } from '../../lib/tool-errors.ts';
import { worktreePlace } from '../../lib/worktree/worktree.ts';
import { createManualClock } from '../helpers/manual-clock.ts';

test('a worktree claimed by an unsettled run: the next run asking for it is refused at /worktree, the name not echoed', async () => {
  let supervisors = 0;
  const runtime = createRuntime({
    clock: createManualClock(),
    random: (n) => randomBytes(n),
    checkVersion: async () => {},
    // Each start that gets this far fails at once, as a spawn that could not happen: the claim lasts until then.
    prepareSupervisor: () => {
      supervisors += 1;
      throw new Error('no supervisor in this spec');
    },
    isGone: () => true,
    sessionLock: createSessionLock(),
    listSessionIds: () => [],
    nativeEnv: {},
  });
  const request = {
    prompt: 'x',
    cwd: '/repo',
    permissionMode: 'dontAsk' as const,
    nativeOptions: {},
    session: { kind: 'fresh' as const },
    timeoutMs: 60_000,
    idleTimeoutMs: null,
    worktree: worktreePlace('/repo', 'zqxname'),
  };
  const prepared = { request, bin: '/bin/true', argv: { args: [], stdin: 'x', streamInput: false } };
  const first = runtime.start(prepared, { acquiredBy: null, sync: false });
  try {
    assert.throws(
      () => runtime.start(prepared, { acquiredBy: null, sync: false }),
      (e: unknown) => {
        assert.ok(isToolError(e));
        assert.deepEqual([e.code, e.path], ['invalid_arguments', '/worktree']);
        assert.match(e.message, /being created by another run/);
        assert.equal(e.message.includes('zqxname'), false, 'the submitted name is not echoed');
        return true;
      },
    );
    assert.deepEqual(
      runtime.list().map((r) => r.run_id),
      [first.run_id],
      'the refused run reserved nothing',
    );
  } finally {
    await first.live.settled;
    await runtime.close();
  }
  assert.equal(supervisors, 1, 'only the first run got as far as a supervisor');
});
