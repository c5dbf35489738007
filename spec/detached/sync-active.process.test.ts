// A synchronous claude.run holds one of the 4 active slots while it runs; MCP cancellation of that
// call (notifications/cancelled) cancels its run, frees the slot, and the settled run stays retained.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at, objs } from '../helpers/typed-results.ts';
import { createSessionHarness, waitForState, waitUntil } from '../sessions/helpers.ts';

const HANG = '[fake:sigint_result] hold';
const SYNC_REQUEST_ID = 9_000_001;

test('sync claude.run counts toward the active limit; cancelling the call cancels the run', async () => {
  const h = await createSessionHarness();
  try {
    const sync = h.adapter.handle({
      jsonrpc: '2.0',
      id: SYNC_REQUEST_ID,
      method: 'tools/call',
      params: { name: 'claude.run', arguments: { prompt: `${HANG} sync`, cwd: h.dir } },
    });
    const detached: string[] = [];
    for (let i = 0; i < 3; i++) detached.push(await h.start({ prompt: `${HANG} ${i}`, cwd: h.dir }));
    const refused = await h.call('claude.run.start', { prompt: 'one too many', cwd: h.dir });
    assert.equal(refused.error?.['code'], 'active_limit_reached');
    const runs = objs(at((await h.call('claude.run.list', {})).result, 'runs'), 'runs');
    assert.equal(runs.length, 4);
    const syncId = String(runs.find((r) => !detached.includes(String(r['run_id'])))?.['run_id']);

    await waitForState(h, syncId, 'running');
    await waitUntil('sync native ready', () => h.lines().some((l) => l.ready === 'session' && l.prompt === `${HANG} sync`));
    await h.adapter.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: SYNC_REQUEST_ID, reason: 'spec' } });
    assert.equal(await sync, undefined, 'a cancelled request gets no response');
    const settled = await h.settled(syncId);
    assert.deepEqual(
      [settled.error?.['code'], settled.result?.['cancelled'], settled.result?.['cleanup_confirmed']],
      ['cancelled', true, true],
    );

    const admitted = await h.call('claude.run.start', { prompt: 'now there is room', cwd: h.dir });
    assert.equal(admitted.isError, false, 'the cancelled sync run freed its active slot');
    for (const id of detached) await h.call('claude.run.cancel', { run_id: id });
  } finally {
    await h.close();
  }
});
