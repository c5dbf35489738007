// claude.run.events: bounded cursor pages over the run's native events, overflow (> 256 events),
// stale cursors read during a live run, invalid cursors and limit bounds, through tools/call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/util/json.ts';
import { MAX_EVENTS, encodeCursor } from '../../lib/runs/event-ring.ts';
import { createSessionHarness, waitForState, waitUntil } from '../sessions/helpers.ts';
import { eventPageOf, num, type EventPageView } from '../helpers/typed-results.ts';

const codeOf = (out: { error: JsonObject | null }): string => String(out.error?.['code']);

test('a flood of events: pages report the overflow, page through every retained event, then end', async () => {
  const h = await createSessionHarness({ FAKE_CLAUDE_FLOOD_EVENTS: '600' });
  try {
    const runId = await h.start({ prompt: '[fake:flood] many deltas', cwd: h.dir });
    const final = (await h.settled(runId)).result!;
    const total = num(final['events_total'], 'events_total');
    assert.ok(total > MAX_EVENTS + 300, `flooded: ${total} events`);
    assert.equal(final['events_dropped'], total - MAX_EVENTS);

    const first = eventPageOf((await h.call('claude.run.events', { run_id: runId, limit: 100 })).result);
    assert.equal(first.events[0]!.seq, total - MAX_EVENTS + 1, 'starts at the oldest retained event');
    assert.equal(first.missed_events, total - MAX_EVENTS, 'the evicted events are reported, not hidden');
    assert.equal(first.stale_cursor, false);
    assert.equal(first.has_more, true);

    const seqs = first.events.map((e) => e.seq);
    let page = first;
    while (page.has_more) {
      page = eventPageOf((await h.call('claude.run.events', { run_id: runId, cursor: page.next_cursor, limit: 100 })).result);
      assert.equal(page.missed_events, 0);
      seqs.push(...page.events.map((e) => e.seq));
    }
    assert.deepEqual(
      seqs,
      Array.from({ length: MAX_EVENTS }, (_, i) => total - MAX_EVENTS + 1 + i),
      'contiguous, every retained event once',
    );
    assert.equal(page.events.at(-1)!.event['type'], 'result');
    const end = eventPageOf((await h.call('claude.run.events', { run_id: runId, cursor: page.next_cursor })).result);
    assert.deepEqual([end.events.length, end.has_more, end.missed_events, end.next_cursor], [0, false, 0, page.next_cursor]);
  } finally {
    await h.close();
  }
});

test('a cursor held while the run overflows becomes stale and says how much was missed', async () => {
  const h = await createSessionHarness({ FAKE_CLAUDE_SLOW_EVENTS: '400', FAKE_CLAUDE_DELAY_MS: '5' });
  try {
    const prompt = '[fake:slow] a live stream';
    const runId = await h.start({ prompt, cwd: h.dir });
    await waitForState(h, runId, 'running');
    let early: EventPageView | null = null;
    await waitUntil('first events', async () => {
      early = eventPageOf((await h.call('claude.run.events', { run_id: runId, limit: 2 })).result);
      return early.events.length === 2;
    });
    const held = early!;
    assert.equal(held.events[0]!.seq, 1);
    assert.equal(held.missed_events, 0);
    const final = (await h.settled(runId)).result!;
    const total = num(final['events_total'], 'events_total');
    const stale = eventPageOf((await h.call('claude.run.events', { run_id: runId, cursor: held.next_cursor, limit: 5 })).result);
    assert.equal(stale.stale_cursor, true);
    assert.equal(stale.events[0]!.seq, total - MAX_EVENTS + 1, 'resumes at the oldest retained event');
    assert.equal(stale.missed_events, total - MAX_EVENTS - 2, 'exactly the events between the cursor and the oldest retained');
  } finally {
    await h.close();
  }
});

test('invalid cursors and limit bounds are invalid_arguments with their path', async () => {
  const h = await createSessionHarness();
  try {
    const a = String((await h.call('claude.run', { prompt: 'a', cwd: h.dir })).result?.['run_id']);
    const b = String((await h.call('claude.run', { prompt: 'b', cwd: h.dir })).result?.['run_id']);
    const fromB = eventPageOf((await h.call('claude.run.events', { run_id: b, limit: 1 })).result).next_cursor;
    const cases: Array<[JsonObject, string, RegExp]> = [
      [{ cursor: 'not a cursor!' }, '/cursor', /malformed/],
      [{ cursor: Buffer.from('v1:x:y').toString('base64url') }, '/cursor', /malformed/],
      [{ cursor: fromB }, '/cursor', /another run/],
      [{ cursor: encodeCursor(10_000, a) }, '/cursor', /past the newest/],
      [{ cursor: 'x'.repeat(257) }, '/cursor', /at most 256/],
      [{ limit: 0 }, '/limit', /at least 1|minimum|>= ?1/],
      [{ limit: 257 }, '/limit', /at most 256|maximum|<= ?256/],
      [{ limit: 2.5 }, '/limit', /integer/],
    ];
    for (const [args, path, message] of cases) {
      const out = await h.call('claude.run.events', { run_id: a, ...args });
      assert.deepEqual([codeOf(out), out.error?.['path']], ['invalid_arguments', path], JSON.stringify(args));
      assert.match(String(out.error?.['message']), message, JSON.stringify(args));
    }
    for (const limit of [1, 256]) {
      const out = await h.call('claude.run.events', { run_id: a, limit });
      assert.equal(out.isError, false);
      const page = eventPageOf(out.result);
      assert.equal(page.events.length, Math.min(limit, page.events_total));
    }
  } finally {
    await h.close();
  }
});
