/**
 * Cancel in two steps, through the tools and the real process table: the native's own interrupt first (its
 * turn ends with its result, the process exits on EOF, no signal sent), the ladder only when no result comes
 * within INTERRUPT_RESULT_GRACE_MS; `cancel_step` says which ended the run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { identify, isRunning } from '../helpers/proc.ts';
import { at } from '../helpers/typed-results.ts';
import { createSessionHarness, waitUntil } from '../sessions/helpers.ts';

const HANG = { FAKE_CLAUDE_SCENARIO: 'slow', FAKE_CLAUDE_SLOW_EVENTS: '100000', FAKE_CLAUDE_DELAY_MS: '50' };

async function startStreaming(h: Awaited<ReturnType<typeof createSessionHarness>>): Promise<{ runId: string; pid: number }> {
  const runId = await h.start({ prompt: 'stream until interrupted', cwd: h.dir });
  let pid = 0;
  await waitUntil('the native turn streaming', () => {
    pid = h.lines().find((l) => l.ready === 'session')?.pid ?? 0;
    return pid !== 0;
  });
  return { runId, pid };
}

test('cancel mid-turn: the interrupt ends the turn in-band, its result is kept, the native exits by itself', async () => {
  const h = await createSessionHarness(HANG);
  try {
    const { runId, pid } = await startStreaming(h);
    const native = identify(pid);
    assert.ok(native);
    assert.equal((await h.call('claude.run.cancel', { run_id: runId })).result?.['cancel_requested'], true);
    const done = await h.settled(runId);
    const full = await h.full(runId);
    assert.equal(done.error?.code, 'cancelled');
    assert.deepEqual([full['cancelled'], full['cancel_step'], full['cleanup_confirmed']], [true, 'interrupt', true]);
    assert.equal(at(full, 'final', 'subtype'), 'error_during_execution', 'the interrupted turn wrote its own result');
    // The fake exits 1 on EOF after an interrupted turn, as 2.1.332 does; a SIGINT would have ended it 0 or 130.
    assert.deepEqual([full['exit_code'], full['signal']], [1, null]);
    const lines = h
      .lines()
      .filter((l) => l.pid === pid)
      .map((l) => l.ready);
    assert.ok(lines.includes('interrupted'), lines.join(','));
    assert.equal(isRunning(native), false);
  } finally {
    await h.close();
  }
});

test('cancel of a turn that ignores the interrupt: after the grace the ladder ends it (cancel_step ladder)', async () => {
  const h = await createSessionHarness({ ...HANG, FAKE_CLAUDE_IGNORE_INTERRUPT: '1' });
  try {
    const { runId, pid } = await startStreaming(h);
    const native = identify(pid);
    assert.ok(native);
    await h.call('claude.run.cancel', { run_id: runId });
    await h.settled(runId);
    const full = await h.full(runId);
    assert.deepEqual([full['cancelled'], full['cancel_step'], full['cleanup_confirmed']], [true, 'ladder', true]);
    assert.ok(!h.lines().some((l) => l.pid === pid && l.ready === 'interrupted'));
    assert.equal(isRunning(native), false);
  } finally {
    await h.close();
  }
});

test('a run that was not cancelled has cancel_step null', async () => {
  const h = await createSessionHarness();
  try {
    const runId = await h.start({ prompt: 'plain', cwd: h.dir });
    await h.settled(runId);
    const full = await h.full(runId);
    assert.deepEqual([full['cancelled'], full['cancel_step'], full['is_error']], [false, null, false]);
  } finally {
    await h.close();
  }
});
