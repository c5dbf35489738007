/**
 * Per-run ingestion of native stdout frames (already split and bounded by the line splitter).
 * Keeps the bounded event ring, the first valid final `result` event (separately, bounded), and the
 * few facts classification needs. It never decides the outcome; it only tells the caller when a
 * bound was crossed so the run can be stopped.
 */
import { isUtf8 } from 'node:buffer';
import type { JsonObject } from '../util/json.ts';
import { assertNever } from '../util/assert-never.ts';
import { getBoolean, getNumber, getObject, getString, parseNativeEvent } from '../native/events.ts';
import type { EventKind } from '../native/events.ts';
import { createEventRing } from './event-ring.ts';
import type { EventRing } from './event-ring.ts';

export const MAX_FINAL_BYTES = 128 * 1024;
/** Distinct tool names kept from system/permission_denied events. */
export const MAX_DENIED_TOOLS = 32;
const MAX_TOOL_NAME_CHARS = 200;
const SYNTHETIC_MODEL = '<synthetic>';

export type IngestSignal = 'continue' | 'frame_too_large' | 'final_too_large';

export interface InitFacts {
  readonly session_id: string | null;
  readonly model: string | null;
  readonly claude_code_version: string | null;
  readonly permissionMode: string | null;
  readonly cwd: string | null;
}

export interface IngestState {
  /** The first valid final event (type result, string subtype, boolean is_error), never truncated. */
  readonly final: JsonObject | null;
  readonly final_bytes: number | null;
  /** Every JSON object with type "result", valid or not. More than one is a duplicate final event. */
  readonly results_seen: number;
  /** Result-typed objects lacking a string subtype or boolean is_error. */
  readonly invalid_results: number;
  /** Byte size of a would-be final event that exceeded the bound (then `final` stays null). */
  readonly final_too_large_bytes: number | null;
  /**
   * An open run (keep_open): each turn's result is that turn's final, so `final` is the latest turn's (null when
   * the latest result was not valid) and several results are no duplicate.
   */
  readonly final_per_turn: boolean;
  /** The bound a final event is held to in this run (options.maxFinalBytes, default MAX_FINAL_BYTES). */
  readonly max_final_bytes: number;
  /** Frames that were not a JSON object (whitespace-only frames are ignored, not counted). */
  readonly malformed_lines: number;
  /** Frames the splitter refused as oversized, and the largest size seen. */
  readonly frames_too_large: number;
  readonly largest_oversize_bytes: number | null;
  /** The first system/init event's facts, or null when none arrived. */
  readonly init: InitFacts | null;
  /** The last non-synthetic assistant message.model. */
  readonly assistant_model: string | null;
  /** The last assistant `error` code (set on synthetic API-error messages) and its api_error_status. */
  readonly last_assistant_error: string | null;
  readonly last_assistant_error_status: number | null;
  readonly api_retries: number;
  /** The last system/api_retry, reduced to its small figures (a retained run must not pin a whole event). */
  readonly last_api_retry: {
    readonly attempt: number | null;
    readonly error_status: number | null;
    readonly retry_delay_ms: number | null;
  } | null;
  readonly permission_denied_events: number;
  readonly denied_tools: readonly string[];
  readonly events_total: number;
  readonly events_dropped: number;
  readonly events_omitted: number;
}

export interface Ingest {
  onFrame(frame: Buffer): IngestSignal;
  onOversizeFrame(bytes: number): IngestSignal;
  snapshot(): IngestState;
  /** How many `result`-typed events were seen so far (a cheap read of snapshot().results_seen). */
  resultsSeen(): number;
  readonly ring: EventRing;
}

export interface IngestOptions {
  /** Cursor namespace of this run's event ring (use the run id). */
  readonly ringId: string;
  readonly maxFinalBytes?: number;
  /** An open run: every result is its turn's final (see IngestState.final_per_turn). */
  readonly finalPerTurn?: boolean;
  /** Called with every parsed event after it was recorded (progress); absent means no per-event work. */
  readonly onEvent?: (kind: EventKind, event: JsonObject) => void;
}

/** Init facts are identifiers and paths; anything longer is not kept per retained run. */
const MAX_INIT_FIELD_CHARS = 4096;
const short = (value: string | null): string | null => (value === null ? null : value.slice(0, MAX_INIT_FIELD_CHARS));

const WHITESPACE_ONLY = /^[ \t\r\n]*$/;

/**
 * What the ring keeps of a frame: its bytes (the ring copies them off the JS heap). A frame that is not valid
 * UTF-8 is kept as its decoding re-encoded (replacement characters included), as the decoded text was
 * before, so pages and byte counts read the same either way.
 */
function ringBytes(frame: Buffer, text: string): Buffer {
  return isUtf8(frame) ? frame : Buffer.from(text, 'utf8');
}

type RingFields = 'events_total' | 'events_dropped' | 'events_omitted';

/** The facts a snapshot copies out, updated in place frame by frame (the ring's counts are read at snapshot). */
type IngestFacts = {
  -readonly [K in Exclude<keyof IngestState, RingFields | 'max_final_bytes' | 'denied_tools' | 'final_per_turn'>]: IngestState[K];
} & {
  readonly final_per_turn: boolean;
  readonly max_final_bytes: number;
  readonly denied_tools: string[];
};

/** Keys in IngestState order, so a snapshot spreads them in the order it always had. */
function emptyFacts(maxFinalBytes: number, finalPerTurn: boolean): IngestFacts {
  return {
    final: null,
    final_bytes: null,
    results_seen: 0,
    invalid_results: 0,
    final_too_large_bytes: null,
    final_per_turn: finalPerTurn,
    max_final_bytes: maxFinalBytes,
    malformed_lines: 0,
    frames_too_large: 0,
    largest_oversize_bytes: null,
    init: null,
    assistant_model: null,
    last_assistant_error: null,
    last_assistant_error_status: null,
    api_retries: 0,
    last_api_retry: null,
    permission_denied_events: 0,
    denied_tools: [],
  };
}

/**
 * A result-typed event. `frame` is the native line (its size is what the final bound counts), `data` what the
 * ring keeps. Only the first valid one becomes the final; once one was refused as too large, none does.
 */
function recordResult(facts: IngestFacts, ring: EventRing, event: JsonObject, frame: Buffer, data: Buffer): IngestSignal {
  const bytes = frame.length;
  facts.results_seen += 1;
  const valid = getString(event, 'subtype') !== null && getBoolean(event, 'is_error') !== null;
  if (!valid) facts.invalid_results += 1;
  if (!valid && facts.final_per_turn) facts.final = null;
  if (valid && (facts.final === null || facts.final_per_turn) && facts.final_too_large_bytes === null) {
    if (bytes > facts.max_final_bytes) {
      // Not kept anywhere, not even in the ring: an oversized final must not look like a truncated success.
      facts.final_too_large_bytes = bytes;
      // Per turn, the earlier turn's final must not stand for this one (its record, its charge).
      if (facts.final_per_turn) facts.final = null;
      ring.omit();
      return 'final_too_large';
    }
    facts.final = event;
    facts.final_bytes = bytes;
  }
  ring.push(event, data);
  return 'continue';
}

function recordAssistant(facts: IngestFacts, event: JsonObject): void {
  const message = getObject(event, 'message');
  const model = getString(message, 'model');
  if (model !== null && model !== SYNTHETIC_MODEL) facts.assistant_model = model;
  const error = getString(event, 'error');
  if (error !== null) {
    facts.last_assistant_error = error;
    facts.last_assistant_error_status = getNumber(event, 'api_error_status');
  }
}

/** The facts any other event carries; the caller pushes it to the ring afterwards. */
function recordEvent(facts: IngestFacts, kind: Exclude<EventKind, 'result'>, event: JsonObject): void {
  switch (kind) {
    case 'system_init':
      facts.init ??= {
        session_id: short(getString(event, 'session_id')),
        model: short(getString(event, 'model')),
        claude_code_version: short(getString(event, 'claude_code_version')),
        permissionMode: short(getString(event, 'permissionMode')),
        cwd: short(getString(event, 'cwd')),
      };
      break;
    case 'system_api_retry':
      facts.api_retries += 1;
      facts.last_api_retry = {
        attempt: getNumber(event, 'attempt'),
        error_status: getNumber(event, 'error_status'),
        retry_delay_ms: getNumber(event, 'retry_delay_ms'),
      };
      break;
    case 'system_permission_denied': {
      facts.permission_denied_events += 1;
      const tool = getString(event, 'tool_name')?.slice(0, MAX_TOOL_NAME_CHARS) ?? null;
      const tools = facts.denied_tools;
      if (tool !== null && !tools.includes(tool) && tools.length < MAX_DENIED_TOOLS) tools.push(tool);
      break;
    }
    case 'assistant':
      recordAssistant(facts, event);
      break;
    case 'system_status':
    case 'system_other':
    case 'stream_event':
    case 'user':
    case 'other':
      break;
    default:
      assertNever(kind);
  }
}

export function createIngest(options: IngestOptions): Ingest {
  const ring = createEventRing({ ringId: options.ringId });
  const facts = emptyFacts(options.maxFinalBytes ?? MAX_FINAL_BYTES, options.finalPerTurn === true);
  return {
    ring,
    onFrame(frame) {
      const text = frame.toString('utf8');
      const parsed = parseNativeEvent(text);
      if (!parsed.ok) {
        if (!WHITESPACE_ONLY.test(frame.toString('latin1'))) facts.malformed_lines += 1;
        return 'continue';
      }
      const { event, kind } = parsed;
      const data = ringBytes(frame, text);
      if (kind === 'result') {
        const signal = recordResult(facts, ring, event, frame, data);
        if (signal === 'continue') options.onEvent?.(kind, event);
        return signal;
      }
      recordEvent(facts, kind, event);
      ring.push(event, data);
      options.onEvent?.(kind, event);
      return 'continue';
    },
    onOversizeFrame(bytes) {
      facts.frames_too_large += 1;
      facts.largest_oversize_bytes = Math.max(facts.largest_oversize_bytes ?? 0, bytes);
      ring.omit();
      return 'frame_too_large';
    },
    resultsSeen: () => facts.results_seen,
    snapshot() {
      const { events_total, events_dropped, events_omitted } = ring.counts();
      return { ...facts, denied_tools: [...facts.denied_tools], events_total, events_dropped, events_omitted };
    },
  };
}
