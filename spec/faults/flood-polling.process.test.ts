/**
 * Four detached runs flood numbered lines while a client polls their events: each run accounts for every
 * line (events_total exact, nothing malformed) and ends with its own final result, unspliced.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createToolHarness } from '../helpers/tool-harness.ts';
import { pollUntil } from '../helpers/poll.ts';

const FLOODS = 4;
const LINES = 20_000;
/** A hang guard for the whole polling loop, not a speed promise. */
const FLOOD_DEADLINE_MS = 120_000;

test(`${FLOODS} detached floods of ${LINES} numbered lines under event polling: every line counted, finals intact`, async () => {
  const h = await createToolHarness({ env: { FAKE_CLAUDE_SCENARIO: 'numbered_flood', FAKE_CLAUDE_FLOOD_LINES: String(LINES) } });
  try {
    const ids: string[] = [];
    for (let i = 0; i < FLOODS; i++) {
      const started = await h.call('claude.run.start', { prompt: `flood ${i}`, cwd: h.dir });
      assert.equal(started.isError, false, started.text.slice(0, 300));
      ids.push(String(started.result?.['run_id']));
    }
    const done = new Set<string>();
    let polls = 0;
    // A client's requests arrive through I/O: the event loop turns between rounds of polls.
    await pollUntil(
      () => `every flood to complete (${done.size} of ${FLOODS})`,
      async () => {
        for (const id of ids) {
          if (done.has(id)) continue;
          const events = await h.call('claude.run.events', { run_id: id, limit: 64 });
          assert.equal(events.isError, false, events.text.slice(0, 300));
          polls++;
          const result = (await h.call('claude.run.result', { run_id: id })).result ?? {};
          if (result['completed'] === true) done.add(id);
        }
        return done.size === FLOODS;
      },
      { timeoutMs: FLOOD_DEADLINE_MS, intervalMs: 0 },
    );
    for (const id of ids) {
      const result = await h.full(id);
      assert.equal(result['is_error'], false, JSON.stringify(result['error']));
      assert.equal(result['malformed_lines'], 0);
      assert.equal(result['events_total'], LINES + 2, 'init + every numbered line + result');
      assert.equal(result['result'], `lines ${LINES}`);
      assert.equal(result['cleanup_confirmed'], true);
    }
    assert.ok(polls > 0);
  } finally {
    await h.close();
  }
});
