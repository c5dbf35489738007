import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createEventRing,
  encodeCursor,
  DEFAULT_PAGE_LIMIT,
  MAX_CURSOR_CHARS,
  MAX_RING_ID_CHARS,
  MAX_EVENTS,
  MAX_EVENT_BYTES,
  MAX_PAGE_BYTES,
  MAX_PAGE_LIMIT,
} from '../../lib/runs/event-ring.ts';
import type { EventRing } from '../../lib/runs/event-ring.ts';
import { isToolError } from '../../lib/tool-errors.ts';
import { objAt } from '../helpers/typed-results.ts';

/** An event whose JSON serialization is exactly `bytes` long: {"p":"xx…"} is 8 bytes of framing. */
function sized(bytes: number): { p: string } {
  return { p: 'x'.repeat(bytes - 8) };
}

function fill(ring: EventRing, count: number): void {
  for (let i = 0; i < count; i += 1) ring.push({ i });
}

function rejects(fn: () => unknown, path: string): void {
  assert.throws(fn, (error: unknown) => isToolError(error) && error.code === 'invalid_arguments' && error.path === path);
}

test('bounds are the documented ones', () => {
  assert.equal(MAX_EVENTS, 256);
  assert.equal(MAX_EVENT_BYTES, 256 * 1024);
  assert.equal(MAX_PAGE_BYTES, 128 * 1024);
  assert.equal(DEFAULT_PAGE_LIMIT, 50);
  assert.equal(MAX_PAGE_LIMIT, 256);
  assert.equal(Buffer.byteLength(JSON.stringify(sized(1000))), 1000);
});

test('event count: exactly MAX_EVENTS retained, one more evicts the oldest', () => {
  const ring = createEventRing({ ringId: 'r' });
  fill(ring, MAX_EVENTS);
  assert.deepEqual(ring.counts(), {
    events_total: 256,
    events_retained: 256,
    bytes_retained: ring.counts().bytes_retained,
    events_dropped: 0,
    events_omitted: 0,
  });
  assert.equal(ring.push({ i: 256 }).seq, 257);
  const counts = ring.counts();
  assert.equal(counts.events_retained, 256);
  assert.equal(counts.events_dropped, 1);
  const page = ring.page(undefined, 1);
  assert.equal(page.events[0]?.seq, 2);
  assert.equal(page.missed_events, 1, 'a reader from the start is told about the evicted event');
  assert.equal(page.stale_cursor, false, 'no cursor given');
});

test('single event size: exactly MAX_EVENT_BYTES is retained (alone), one byte more is omitted', () => {
  const ring = createEventRing({ ringId: 'r' });
  fill(ring, 3);
  assert.deepEqual(ring.push(sized(MAX_EVENT_BYTES)), { seq: 4, retained: true });
  assert.equal(ring.counts().events_retained, 1);
  assert.equal(ring.counts().events_dropped, 3);
  assert.equal(ring.counts().bytes_retained, MAX_EVENT_BYTES);
  assert.deepEqual(ring.push(sized(MAX_EVENT_BYTES + 1)), { seq: 5, retained: false });
  assert.equal(ring.counts().events_omitted, 1);
  assert.equal(ring.counts().events_retained, 1, 'an omitted event evicts nothing');
});

test('total bytes: exactly MAX_EVENT_BYTES across events is kept, one byte more evicts', () => {
  const ring = createEventRing({ ringId: 'r' });
  const quarter = MAX_EVENT_BYTES / 4;
  for (let i = 0; i < 4; i += 1) ring.push(sized(quarter));
  assert.equal(ring.counts().bytes_retained, MAX_EVENT_BYTES);
  assert.equal(ring.counts().events_dropped, 0);
  ring.push(sized(8));
  assert.equal(ring.counts().events_dropped, 1);
  assert.equal(ring.counts().bytes_retained, 3 * quarter + 8);
});

test('multibyte content is counted in UTF-8 bytes', () => {
  const ring = createEventRing({ ringId: 'r' });
  ring.push({ p: 'é' }); // {"p":"é"} = 8 + 2 bytes
  assert.equal(ring.counts().bytes_retained, 10);
});

test('paging walks every event once with monotonic seqs; next_cursor continues and has_more ends', () => {
  const ring = createEventRing({ ringId: 'run-1' });
  fill(ring, 120);
  const seen: number[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 10; guard += 1) {
    const page = ring.page(cursor);
    seen.push(...page.events.map((e) => e.seq));
    assert.equal(page.missed_events, 0);
    cursor = page.next_cursor;
    if (!page.has_more) break;
  }
  assert.deepEqual(
    seen,
    Array.from({ length: 120 }, (_, i) => i + 1),
  );
  const first = ring.page(undefined);
  assert.equal(first.events.length, DEFAULT_PAGE_LIMIT);
  assert.deepEqual(first.events[0]?.event, { i: 0 });
  const empty = ring.page(cursor);
  assert.deepEqual(empty.events, []);
  assert.equal(empty.has_more, false);
  assert.equal(empty.next_cursor, cursor, 'an empty page keeps the position for polling');
  ring.push({ i: 120 });
  assert.deepEqual(ring.page(cursor).events, [{ seq: 121, event: { i: 120 } }]);
});

test('pages hand out copies: mutating a page does not change the ring', () => {
  const ring = createEventRing({ ringId: 'r' });
  ring.push({ a: { b: 1 } });
  const page = ring.page(undefined);
  objAt(page.events[0]?.event, 'a')['b'] = 2;
  assert.deepEqual(ring.page(undefined).events[0]?.event, { a: { b: 1 } });
});

test('limit bounds: 1 and MAX_PAGE_LIMIT work; 0, MAX_PAGE_LIMIT + 1 and non-integers are invalid', () => {
  const ring = createEventRing({ ringId: 'r' });
  fill(ring, MAX_EVENTS);
  assert.equal(ring.page(undefined, 1).events.length, 1);
  assert.equal(ring.page(undefined, MAX_PAGE_LIMIT).events.length, MAX_PAGE_LIMIT);
  assert.equal(ring.page(undefined, MAX_PAGE_LIMIT).has_more, false);
  assert.equal(ring.page(undefined, MAX_PAGE_LIMIT - 1).has_more, true);
  for (const bad of [0, MAX_PAGE_LIMIT + 1, 1.5, Number.NaN, -1]) rejects(() => ring.page(undefined, bad), '/limit');
});

test('page byte cap: exactly MAX_PAGE_BYTES fits, one more byte stops the page; a lone big event still pages', () => {
  const ring = createEventRing({ ringId: 'r' });
  const half = MAX_PAGE_BYTES / 2;
  ring.push(sized(half));
  ring.push(sized(half));
  ring.push(sized(8));
  const page = ring.page(undefined, 10);
  assert.deepEqual(
    page.events.map((e) => e.seq),
    [1, 2],
  );
  assert.equal(page.has_more, true);
  assert.deepEqual(
    ring.page(page.next_cursor).events.map((e) => e.seq),
    [3],
  );

  const over = createEventRing({ ringId: 'r' });
  over.push(sized(half));
  over.push(sized(half + 1));
  assert.deepEqual(
    over.page(undefined, 10).events.map((e) => e.seq),
    [1],
  );

  const big = createEventRing({ ringId: 'r' });
  big.push(sized(MAX_PAGE_BYTES + 1000));
  big.push(sized(8));
  const lone = big.page(undefined, 10);
  assert.deepEqual(
    lone.events.map((e) => e.seq),
    [1],
    'first event of a page is always included',
  );
  assert.equal(lone.has_more, true);
  assert.deepEqual(
    big.page(lone.next_cursor, 10).events.map((e) => e.seq),
    [2],
  );
});

test('overflow: a cursor behind the oldest retained event is stale, reports missed_events and continues', () => {
  const ring = createEventRing({ ringId: 'r' });
  fill(ring, 10);
  const page = ring.page(undefined, 4); // read 1..4, cursor at 5
  fill(ring, MAX_EVENTS); // seqs 11..266; 1..10 evicted
  const next = ring.page(page.next_cursor, 3);
  assert.equal(next.stale_cursor, true);
  assert.equal(next.missed_events, 6, 'seqs 5..10 were evicted before they were read');
  assert.deepEqual(
    next.events.map((e) => e.seq),
    [11, 12, 13],
  );
  const after = ring.page(next.next_cursor, 3);
  assert.equal(after.stale_cursor, false);
  assert.equal(after.missed_events, 0);
  assert.equal(after.events_dropped, 10);
});

test('a cursor exactly at the oldest retained event is not stale; one before it is', () => {
  const ring = createEventRing({ ringId: 'r' });
  fill(ring, MAX_EVENTS + 1); // seq 1 evicted, oldest is 2
  const atOldest = ring.page(encodeCursor(2, 'r'), 1);
  assert.equal(atOldest.stale_cursor, false);
  assert.equal(atOldest.missed_events, 0);
  const beforeOldest = ring.page(encodeCursor(1, 'r'), 1);
  assert.equal(beforeOldest.stale_cursor, true);
  assert.equal(beforeOldest.missed_events, 1);
});

test('omitted events take a seq and show up as missed, not as stale', () => {
  const ring = createEventRing({ ringId: 'r' });
  ring.push({ i: 1 });
  const cursor = ring.page(undefined).next_cursor;
  ring.push(sized(MAX_EVENT_BYTES + 1));
  ring.omit();
  ring.push({ i: 4 });
  const page = ring.page(cursor);
  assert.deepEqual(
    page.events.map((e) => e.seq),
    [4],
  );
  assert.equal(page.missed_events, 2);
  assert.equal(page.stale_cursor, false);
  assert.equal(page.events_omitted, 2);
  // Nothing retained after the cursor: the page skips to the newest seq and says so.
  const ring2 = createEventRing({ ringId: 'r' });
  ring2.omit();
  ring2.omit();
  const skipped = ring2.page(undefined);
  assert.deepEqual(skipped.events, []);
  assert.equal(skipped.missed_events, 2);
  assert.equal(skipped.next_cursor, encodeCursor(3, 'r'));
});

test('cursors from another run, from the future, tampered or oversized are invalid /cursor', () => {
  const ring = createEventRing({ ringId: 'run-a' });
  fill(ring, 5);
  const other = createEventRing({ ringId: 'run-b' });
  fill(other, 5);
  rejects(() => ring.page(other.page(undefined, 2).next_cursor), '/cursor');
  assert.equal(ring.page(encodeCursor(6, 'run-a')).events.length, 0, 'one past the newest is the live position');
  rejects(() => ring.page(encodeCursor(7, 'run-a')), '/cursor');
  rejects(() => ring.page(encodeCursor(0, 'run-a')), '/cursor');
  for (const bad of [
    '',
    'not a cursor!',
    'AAAA',
    Buffer.from('v1:01:run-a').toString('base64url'),
    Buffer.from('v2:1:run-a').toString('base64url'),
    Buffer.from('v1:1:run-a').toString('base64url') + '=',
  ]) {
    rejects(() => ring.page(bad), '/cursor');
  }
  const valid = encodeCursor(1, 'run-a');
  assert.equal(ring.page(valid).events[0]?.seq, 1);
});

test('cursor length: exactly MAX_CURSOR_CHARS is decoded, one more is too long; ring ids are bounded so issued cursors fit', () => {
  const ring = createEventRing({ ringId: 'run-a' });
  const reason = (cursor: string): string => {
    try {
      ring.page(cursor);
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
    return 'accepted';
  };
  assert.match(reason('A'.repeat(MAX_CURSOR_CHARS)), /malformed/);
  assert.match(reason('A'.repeat(MAX_CURSOR_CHARS + 1)), /too long/);
  const longest = 'x'.repeat(MAX_RING_ID_CHARS);
  const longRing = createEventRing({ ringId: longest });
  longRing.push({});
  const cursor = encodeCursor(Number.MAX_SAFE_INTEGER, longest);
  assert.ok(cursor.length <= MAX_CURSOR_CHARS, `${cursor.length}`);
  assert.equal(longRing.page(longRing.page(undefined).next_cursor).events.length, 0);
  assert.throws(() => createEventRing({ ringId: longest + 'x' }), RangeError);
  assert.throws(() => createEventRing({ ringId: '' }), RangeError);
});

test('the byte arena: events that wrap around its end or move when it grows read back exactly, in order, under both bounds', () => {
  // Small rings (8 events) so pushes wrap the circular arena, also before it grows (a fresh ring's arena
  // starts at 16 KiB and doubles up to the byte bound); 4 KiB rings never grow, 64 KiB ones grow twice.
  let state = 7;
  const next = (n: number): number => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % Math.max(1, Math.floor(n));
  };
  for (const maxEventBytes of [4096, 64 * 1024]) {
    for (let r = 0; r < 12; r += 1) {
      const maxEvents = 8;
      const ring = createEventRing({ ringId: 'r', maxEvents, maxEventBytes, maxPageBytes: maxEventBytes });
      const model: Array<{ seq: number; text: string }> = [];
      const held = (): number => model.reduce((n, e) => n + Buffer.byteLength(e.text), 0);
      for (let i = 0; i < 250; i += 1) {
        // Multibyte text; sizes from tiny to over the bound (then omitted: it takes a seq, keeps nothing).
        const big = next(4) === 0 && i > 40;
        const event = { i, p: 'é'.repeat(big ? next(maxEventBytes * 0.56) : next(maxEventBytes / 40)) };
        const text = JSON.stringify(event);
        const pushed = i % 2 === 0 ? ring.push(event) : ring.push(event, Buffer.concat([Buffer.from('xx'), Buffer.from(text)]).subarray(2));
        assert.equal(pushed.retained, Buffer.byteLength(text) <= maxEventBytes);
        if (pushed.retained) {
          model.push({ seq: pushed.seq, text });
          while (model.length > maxEvents || held() > maxEventBytes) model.shift();
        }
        assert.equal(ring.counts().events_retained, model.length);
        assert.equal(ring.counts().bytes_retained, held());
        const page = ring.page(undefined, MAX_PAGE_LIMIT);
        assert.deepEqual(
          page.events.map((e) => ({ seq: e.seq, text: JSON.stringify(e.event) })),
          model,
          `ring ${maxEventBytes}/${r}, after push ${i}`,
        );
      }
    }
  }
});
