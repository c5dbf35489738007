/**
 * Bounded ring of native events with cursor paging. Every pushed event gets the next sequence number
 * (from 1), even when it is not retained, so a gap is always visible: evicted events count as
 * `events_dropped`, events too large to retain at all count as `events_omitted`.
 * Events are stored serialized, as UTF-8 bytes in one circular arena per ring that never outgrows the byte
 * bound: the bound is the real memory held, it sits outside the JS heap (retained event text on the heap is
 * what made V8 grow its young generation while runs were ingested: docs/benchmarks.md), and pages hand out
 * fresh copies decoded on read.
 *
 * Cursor: base64url of `v1:<next seq to read>:<ring id>`. The ring id (the run id) makes a cursor from
 * another run an invalid argument rather than a silently wrong position.
 */
import type { JsonObject } from '../util/json.ts';
import { ToolError } from '../tool-errors.ts';

export const MAX_EVENTS = 256;
export const MAX_EVENT_BYTES = 256 * 1024;
export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 256;
/** A page stops before the event that would cross this; the first event of a page is always included. */
export const MAX_PAGE_BYTES = 128 * 1024;
/** Ring ids are run ids (26 chars); the bound keeps every cursor this ring issues under MAX_CURSOR_CHARS. */
export const MAX_RING_ID_CHARS = 128;
export const MAX_CURSOR_CHARS = 256;

const CURSOR_VERSION = 'v1';

export type RingCounts = {
  /** Events pushed (retained or not); also the last sequence number assigned. */
  readonly events_total: number;
  readonly events_retained: number;
  readonly bytes_retained: number;
  readonly events_dropped: number;
  readonly events_omitted: number;
};

export type EventPage = RingCounts & {
  readonly events: Array<{ seq: number; event: JsonObject }>;
  /** Always present: pass it back to continue (also after an empty page, to wait for more). */
  readonly next_cursor: string;
  /** More retained events follow next_cursor right now (a live run may add more later). */
  readonly has_more: boolean;
  /** Sequence numbers skipped by this page (evicted or omitted), from the cursor up to next_cursor. */
  readonly missed_events: number;
  /** The cursor pointed at events that were evicted before this read. */
  readonly stale_cursor: boolean;
};

export interface EventRing {
  /**
   * Returns the sequence number given to the event and whether it was retained. `bytes` is the event's own
   * JSON text as UTF-8 when the caller has it (the native line it was parsed from), saving a
   * re-serialization; the ring copies it (it may be a view of a larger chunk).
   */
  push(event: JsonObject, bytes?: Buffer): { seq: number; retained: boolean };
  /** Counts a native frame that could not be kept at all (e.g. an oversized line); it takes a seq. */
  omit(): number;
  page(cursor: string | undefined, limit?: number): EventPage;
  counts(): RingCounts;
}

export interface EventRingOptions {
  /** Distinguishes this ring's cursors from every other ring's (use the run id). */
  readonly ringId: string;
  readonly maxEvents?: number;
  readonly maxEventBytes?: number;
  readonly maxPageBytes?: number;
}

/** The arena starts this small (a short run never holds more) and doubles up to maxEventBytes as needed. */
const INITIAL_ARENA_BYTES = 16 * 1024;

/**
 * One ring's storage and counters. Retained events are packed back to back in one circular byte arena (their
 * UTF-8 JSON text), oldest at starts[head]; per event only numbers are kept. No JS object per event, so
 * nothing of the ring survives young-generation collections or drives V8's heap growth, and a push is one
 * copy, no allocation.
 */
interface RingState {
  readonly ringId: string;
  readonly maxEvents: number;
  readonly maxEventBytes: number;
  readonly maxPageBytes: number;
  arena: Buffer;
  readonly seqs: Float64Array;
  readonly starts: Uint32Array;
  readonly sizes: Uint32Array;
  /** Slot of the oldest retained event. */
  head: number;
  count: number;
  /** Arena offset where the next event's bytes go (just after the newest). */
  tail: number;
  lastSeq: number;
  bytes: number;
  dropped: number;
  omitted: number;
  evictedThroughSeq: number;
}

export function createEventRing(options: EventRingOptions): EventRing {
  const ring = newRingState(options);
  return {
    push: (event, serialized) => pushEvent(ring, serialized ?? Buffer.from(JSON.stringify(event), 'utf8')),
    omit: () => omitEvent(ring),
    counts: () => countsOf(ring),
    page: (cursor, limit = DEFAULT_PAGE_LIMIT) => readPage(ring, cursor, limit),
  };
}

function newRingState(options: EventRingOptions): RingState {
  const { ringId } = options;
  if (ringId.length === 0 || Buffer.byteLength(ringId, 'utf8') > MAX_RING_ID_CHARS) {
    throw new RangeError(`ringId must be 1 to ${MAX_RING_ID_CHARS} bytes`);
  }
  const maxEvents = options.maxEvents ?? MAX_EVENTS;
  const maxEventBytes = options.maxEventBytes ?? MAX_EVENT_BYTES;
  return {
    ringId,
    maxEvents,
    maxEventBytes,
    maxPageBytes: options.maxPageBytes ?? MAX_PAGE_BYTES,
    arena: Buffer.allocUnsafeSlow(Math.min(INITIAL_ARENA_BYTES, maxEventBytes)),
    seqs: new Float64Array(maxEvents),
    starts: new Uint32Array(maxEvents),
    sizes: new Uint32Array(maxEvents),
    head: 0,
    count: 0,
    tail: 0,
    lastSeq: 0,
    bytes: 0,
    dropped: 0,
    omitted: 0,
    evictedThroughSeq: 0,
  };
}

/** The arena slot of the i-th retained event (0 is the oldest). */
function slotOf(ring: RingState, i: number): number {
  return (ring.head + i) % ring.maxEvents;
}

function countsOf(ring: RingState): RingCounts {
  return {
    events_total: ring.lastSeq,
    events_retained: ring.count,
    bytes_retained: ring.bytes,
    events_dropped: ring.dropped,
    events_omitted: ring.omitted,
  };
}

function omitEvent(ring: RingState): number {
  ring.omitted += 1;
  return ++ring.lastSeq;
}

/** Copies `length` retained bytes starting at arena offset `at` (they may wrap) into target at targetAt. */
function copyOut(ring: RingState, target: Buffer, targetAt: number, at: number, length: number): void {
  const { arena } = ring;
  const first = Math.min(length, arena.length - at);
  arena.copy(target, targetAt, at, at + first);
  if (first < length) arena.copy(target, targetAt + first, 0, length - first);
}

/** Makes room for `size` more bytes: a larger arena (never past maxEventBytes) with the events unwrapped. */
function reserve(ring: RingState, size: number): void {
  const { bytes, count, starts, sizes } = ring;
  if (bytes + size <= ring.arena.length) return;
  let capacity = Math.max(1, ring.arena.length * 2);
  while (capacity < bytes + size) capacity *= 2;
  const grown = Buffer.allocUnsafeSlow(Math.min(capacity, ring.maxEventBytes));
  if (count > 0) copyOut(ring, grown, 0, starts[ring.head] as number, bytes);
  let at = 0;
  for (let i = 0; i < count; i += 1) {
    const s = slotOf(ring, i);
    starts[s] = at;
    at += sizes[s] as number;
  }
  ring.arena = grown;
  ring.tail = bytes;
}

/** Evicts oldest events until one of `size` bytes fits both bounds. */
function evictFor(ring: RingState, size: number): void {
  while (ring.count > 0 && (ring.count + 1 > ring.maxEvents || ring.bytes + size > ring.maxEventBytes)) {
    ring.bytes -= ring.sizes[ring.head] as number;
    ring.evictedThroughSeq = ring.seqs[ring.head] as number;
    ring.head = (ring.head + 1) % ring.maxEvents;
    ring.count -= 1;
    ring.dropped += 1;
  }
  if (ring.count === 0) ring.tail = 0;
}

function pushEvent(ring: RingState, data: Buffer): { seq: number; retained: boolean } {
  const size = data.length;
  if (size > ring.maxEventBytes) return { seq: omitEvent(ring), retained: false };
  evictFor(ring, size);
  reserve(ring, size);
  const { arena, tail } = ring;
  const first = Math.min(size, arena.length - tail);
  data.copy(arena, tail, 0, first);
  if (first < size) data.copy(arena, 0, first, size);
  const seq = ++ring.lastSeq;
  const s = slotOf(ring, ring.count);
  ring.seqs[s] = seq;
  ring.starts[s] = tail;
  ring.sizes[s] = size;
  ring.count += 1;
  ring.bytes += size;
  ring.tail = (tail + size) % arena.length;
  return { seq, retained: true };
}

/** The retained event in slot `s`, decoded (joined first when it wraps around the arena's end). */
function textAt(ring: RingState, s: number): string {
  const at = ring.starts[s] as number;
  const size = ring.sizes[s] as number;
  if (at + size <= ring.arena.length) return ring.arena.toString('utf8', at, at + size);
  const joined = Buffer.allocUnsafe(size);
  copyOut(ring, joined, 0, at, size);
  return joined.toString('utf8');
}

function readPage(ring: RingState, cursor: string | undefined, limit: number): EventPage {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw new ToolError('invalid_arguments', `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}`, '/limit');
  }
  const { count, seqs, sizes } = ring;
  const from = cursor === undefined ? 1 : decodeCursor(cursor, ring.ringId, ring.lastSeq + 1);
  const events: Array<{ seq: number; event: JsonObject }> = [];
  let pageBytes = 0;
  let next = from;
  let index = 0;
  while (index < count && (seqs[slotOf(ring, index)] as number) < from) index += 1;
  if (index === count) {
    next = ring.lastSeq + 1; // nothing retained at or after the cursor: everything up to now was skipped
  } else {
    for (; index < count && events.length < limit; index += 1) {
      const s = slotOf(ring, index);
      const size = sizes[s] as number;
      if (events.length > 0 && pageBytes + size > ring.maxPageBytes) break;
      const seq = seqs[s] as number;
      events.push({ seq, event: JSON.parse(textAt(ring, s)) as JsonObject });
      pageBytes += size;
      next = seq + 1;
    }
  }
  return {
    ...countsOf(ring),
    events,
    next_cursor: encodeCursor(next, ring.ringId),
    has_more: index < count,
    missed_events: next - from - events.length,
    stale_cursor: cursor !== undefined && from <= ring.evictedThroughSeq,
  };
}

export function encodeCursor(nextSeq: number, ringId: string): string {
  return Buffer.from(`${CURSOR_VERSION}:${nextSeq}:${ringId}`, 'utf8').toString('base64url');
}

/** Returns the next sequence number to read; throws invalid_arguments for anything this ring did not issue. */
function decodeCursor(cursor: string, ringId: string, limitSeq: number): number {
  const invalid = (why: string): ToolError => new ToolError('invalid_arguments', `cursor is not valid for this run: ${why}`, '/cursor');
  if (cursor.length > MAX_CURSOR_CHARS) throw invalid('too long');
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid('malformed');
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^v1:([1-9][0-9]{0,15}):(.*)$/s.exec(text);
  if (match === null || encodeCursor(Number(match[1]), match[2] ?? '') !== cursor) throw invalid('malformed');
  if (match[2] !== ringId) throw invalid('it belongs to another run');
  const seq = Number(match[1]);
  if (seq > limitSeq) throw invalid('it points past the newest event');
  return seq;
}
