// An open run (keep_open) with the real pinned claude against the loopback fake API, through the real adapter
// process: two turns in one native process and one conversation, each turn's answer and cost recorded, the
// idle run listed as idle, and claude.run.close ending it with its cleanup confirmed and nothing left.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { promptTag } from '../../fixtures/fake-anthropic/server.ts';
import type { Scenario } from '../../fixtures/fake-anthropic/server.ts';
import { inCwd, marker, startAdapterTier, type AdapterTier } from './adapter-tier.ts';
import { obj, objs } from '../helpers/typed-results.ts';

const FIRST = 'First answer from the open run.';
const SECOND = 'Second answer, same process.';
const SCENARIOS: Record<string, Scenario> = {
  first: { kind: 'text', text: FIRST, chunkChars: 8 },
  second: { kind: 'text', text: SECOND, chunkChars: 8 },
};

describe('an open run over the real binary', () => {
  let tier: AdapterTier;
  before(async () => {
    tier = await startAdapterTier({ scenarios: SCENARIOS });
  });
  after(async () => {
    await tier.close();
  });

  /** The real claude processes of runs (not version checks) alive now. */
  const liveClaudes = async (): Promise<number[]> =>
    (await tier.strays()).filter((p) => p.isBinary && !p.cmdline.includes('--version')).map((p) => p.pid);

  it('two turns in one native process and one session; cost per turn; close ends it with cleanup confirmed', async (t) => {
    await inCwd(tier, async (cwd) => {
      const first = `open ${marker('turn1')} ${promptTag('first')}`;
      const started = await tier.call('claude.run.start', { prompt: first, cwd, keep_open: true });
      assert.equal(started.isError, false, JSON.stringify(started.error));
      const runId = started.result['run_id'];

      const idle1 = await tier.call('claude.run.result', { run_id: runId, wait_seconds: 30 });
      assert.deepEqual([idle1.result['state'], idle1.result['result'], idle1.result['completed']], ['idle', FIRST, false]);
      const pids = await liveClaudes();
      assert.equal(pids.length, 1, 'one real claude waits between turns');

      const second = `again ${marker('turn2')} ${promptTag('second')}`;
      const sent = await tier.call('claude.run.send', { run_id: runId, message: second });
      assert.deepEqual([sent.isError, sent.result['turn']], [false, 2]);
      const idle2 = await tier.call('claude.run.result', { run_id: runId, wait_seconds: 30 });
      assert.deepEqual([idle2.result['state'], idle2.result['result']], ['idle', SECOND]);
      assert.deepEqual(await liveClaudes(), pids, 'the second turn ran in the same process');

      const live = await tier.full(runId);
      const turns = objs(live['turns'], 'turns');
      assert.deepEqual(
        turns.map((turn) => [turn['turn'], turn['result'], turn['is_error'], turn['subtype']]),
        [
          [1, FIRST, false, 'success'],
          [2, SECOND, false, 'success'],
        ],
      );
      assert.equal(new Set(turns.map((turn) => turn['session_id'])).size, 1, 'one session id for both turns');
      for (const turn of turns) assert.ok(typeof turn['cost_usd'] === 'number' && turn['cost_usd'] > 0, 'each turn reports its own cost');
      const [call2] = tier.callsWith(second);
      assert.ok(call2, 'the second message reached the API');
      const history = JSON.stringify(obj(call2.body)['messages']);
      assert.ok(history.includes(FIRST), 'the second turn carries the first answer: one conversation');

      const closedAt = performance.now();
      const closed = await tier.call('claude.run.close', { run_id: runId });
      assert.equal(closed.result['close_requested'], true);
      const done = await tier.call('claude.run.result', { run_id: runId, wait_seconds: 30, detail: 'full' });
      const r = done.result;
      assert.deepEqual([r['completed'], r['is_error'], r['result'], r['exit_code'], r['signal']], [true, false, SECOND, 0, null]);
      assert.equal(r['cleanup_confirmed'], true);
      assert.equal(obj(r['open'])['close_reason'], 'close');
      assert.equal(r['session_id'], turns[0]?.['session_id']);
      assert.deepEqual(await liveClaudes(), [], 'the native exited on EOF');
      await tier.call('claude.run.release', { run_id: runId });
      t.diagnostic(`close to settled: ${Math.round(performance.now() - closedAt)} ms`);
    });
  });
});
