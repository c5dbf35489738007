/**
 * Bounded ring of native events with cursor paging. Every pushed event gets the next sequence number
 * (from 1), even when it is not retained, so a gap is always visible: evicted events count as
 * `events_dropped`, events too large to retain at all count as `events_omitted`.
 * Events are stored serialized: the byte bound is the real memory held, and pages hand out fresh copies.
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
   * Returns the sequence number given to the event and whether it was retained. `text` is the event's own
   * JSON text when the caller has it (the native line it was parsed from), saving a re-serialization.
   */
  push(event: JsonObject, text?: string): { seq: number; retained: boolean };
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

interface Entry {
  readonly seq: number;
  readonly text: string;
  readonly bytes: number;
}

export function createEventRing(options: EventRingOptions): EventRing {
  const { ringId } = options;
  if (ringId.length === 0 || Buffer.byteLength(ringId, 'utf8') > MAX_RING_ID_CHARS) {
    throw new RangeError(`ringId must be 1 to ${MAX_RING_ID_CHARS} bytes`);
  }
  const maxEvents = options.maxEvents ?? MAX_EVENTS;
  const maxEventBytes = options.maxEventBytes ?? MAX_EVENT_BYTES;
  const maxPageBytes = options.maxPageBytes ?? MAX_PAGE_BYTES;
  const entries: Entry[] = [];
  let lastSeq = 0;
  let bytes = 0;
  let dropped = 0;
  let omitted = 0;
  let evictedThroughSeq = 0;

  const counts = (): RingCounts => ({
    events_total: lastSeq,
    events_retained: entries.length,
    bytes_retained: bytes,
    events_dropped: dropped,
    events_omitted: omitted,
  });

  const omit = (): number => {
    omitted += 1;
    return ++lastSeq;
  };

  return {
    push(event, serialized) {
      const text = serialized ?? JSON.stringify(event);
      const size = Buffer.byteLength(text, 'utf8');
      if (size > maxEventBytes) return { seq: omit(), retained: false };
      while (entries.length > 0 && (entries.length + 1 > maxEvents || bytes + size > maxEventBytes)) {
        const old = entries.shift() as Entry;
        bytes -= old.bytes;
        dropped += 1;
        evictedThroughSeq = old.seq;
      }
      const seq = ++lastSeq;
      entries.push({ seq, text, bytes: size });
      bytes += size;
      return { seq, retained: true };
    },
    omit,
    counts,
    page(cursor, limit = DEFAULT_PAGE_LIMIT) {
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
        throw new ToolError('invalid_arguments', `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}`, '/limit');
      }
      const from = cursor === undefined ? 1 : decodeCursor(cursor, ringId, lastSeq + 1);
      const events: Array<{ seq: number; event: JsonObject }> = [];
      let pageBytes = 0;
      let next = from;
      let index = entries.findIndex((entry) => entry.seq >= from);
      if (index === -1) {
        next = lastSeq + 1; // nothing retained at or after the cursor: everything up to now was skipped
      } else {
        for (; index < entries.length && events.length < limit; index += 1) {
          const entry = entries[index] as Entry;
          if (events.length > 0 && pageBytes + entry.bytes > maxPageBytes) break;
          events.push({ seq: entry.seq, event: JSON.parse(entry.text) as JsonObject });
          pageBytes += entry.bytes;
          next = entry.seq + 1;
        }
      }
      return {
        ...counts(),
        events,
        next_cursor: encodeCursor(next, ringId),
        has_more: index !== -1 && index < entries.length,
        missed_events: next - from - events.length,
        stale_cursor: cursor !== undefined && from <= evictedThroughSeq,
      };
    },
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
