/**
 * The record a run leaves in the state directory, and its codec. Small on purpose: which run and server, the
 * run's last known state, the conversation to resume, when and why it ended, and the compact result it
 * settled with (the very outcome claude.run returned: never the events, never the prompt). Pure.
 *
 * format_version says how to read the rest; a reader refuses any version it does not know, so a later format
 * (runs kept across a restart need a lease and a secret) can add fields without an older server misreading them.
 */
import type { JsonObject } from '../util/json.ts';
import { isPlainObject } from '../util/json.ts';
import { isUuid } from '../util/uuid.ts';
import { RUN_STATES, type RunState } from '../runs/types.ts';
import { isRunId, runIdInstance } from '../runs/ids.ts';

export const RECORD_FORMAT_VERSION = 1;
/** One record file, at most: a compact result that does not fit is left out (outcome_omitted), never cut. */
export const MAX_RECORD_BYTES = 64 * 1024;
/** Longest text kept in a record's summary, error message or code (the outcome's own are shorter). */
const MAX_TEXT_CHARS = 16 * 1024;

/** Why a run ended: it settled (its outcome is known), or its server exited first (the supervisor ended it). */
export type EndedBy = 'settled' | 'server_exit';

/** The compact result: the outcome claude.run (or a completed task) returned for the run. */
export interface RecordedOutcome {
  readonly ok: boolean;
  readonly summary: string;
  readonly error: { readonly code: string; readonly message: string } | null;
  /** The summary view of the run; null for an outcome without one. */
  readonly result: JsonObject | null;
  readonly text: string;
  /** The run was cancelled (a task reads `cancelled`). */
  readonly cancelled: boolean;
}

export interface RunRecord {
  readonly format_version: typeof RECORD_FORMAT_VERSION;
  readonly run_id: string;
  /** The server instance (UUID) that ran it: the instance its run_id names. */
  readonly instance: string;
  /** That server's process as lib/process/owner.ts renders it; null when it could not be read. */
  readonly owner: string | null;
  /** The machine's host name: an owner is judged only on the machine it ran on (a home directory may be shared). */
  readonly host: string | null;
  /** Started as an MCP task (only those answer tasks/get). */
  readonly task: boolean;
  readonly state: RunState;
  /** The conversation to pass as resume_session_id; null when unknown or not saved (no_session_persistence). */
  readonly resume_session_id: string | null;
  readonly created_at: string;
  readonly ended: { readonly at: string; readonly by: EndedBy } | null;
  readonly outcome: RecordedOutcome | null;
  /** The run settled, but its compact result was larger than MAX_RECORD_BYTES and was not kept. */
  readonly outcome_omitted: boolean;
}

/** The record's bytes (UTF-8 JSON), with the outcome left out when the whole would pass MAX_RECORD_BYTES. */
export function encodeRecord(record: RunRecord): Buffer {
  const whole = Buffer.from(JSON.stringify(record), 'utf8');
  if (whole.length <= MAX_RECORD_BYTES) return whole;
  return Buffer.from(JSON.stringify({ ...record, outcome: null, outcome_omitted: true }), 'utf8');
}

export type DecodedRecord = { readonly kind: 'record'; readonly record: RunRecord } | { readonly kind: 'invalid'; readonly reason: string };

/** Reads a record's bytes for `runId`; anything but a well-formed record of this format and this run is invalid. */
export function decodeRecord(bytes: Buffer, runId: string): DecodedRecord {
  if (bytes.length > MAX_RECORD_BYTES) return invalid(`larger than ${MAX_RECORD_BYTES} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return invalid('not UTF-8 JSON (corrupt or truncated)');
  }
  if (!isPlainObject(value)) return invalid('not a JSON object');
  const v = value as Record<string, unknown>;
  if (v['format_version'] !== RECORD_FORMAT_VERSION) return invalid('an unknown format_version');
  if (v['run_id'] !== runId || !isRunId(runId)) return invalid('names another run');
  if (typeof v['instance'] !== 'string' || v['instance'] !== runIdInstance(runId)) return invalid('names another instance');
  const problem = fieldProblem(v);
  if (problem !== null) return invalid(problem);
  return { kind: 'record', record: value as unknown as RunRecord };
}

function fieldProblem(v: Record<string, unknown>): string | null {
  if (!(v['owner'] === null || isText(v['owner'], 256))) return 'owner';
  if (!(v['host'] === null || isText(v['host'], 256))) return 'host';
  if (typeof v['task'] !== 'boolean') return 'task';
  if (!RUN_STATES.some((state) => state === v['state'])) return 'state';
  const resume = v['resume_session_id'];
  if (!(resume === null || (typeof resume === 'string' && isUuid(resume)))) return 'resume_session_id';
  if (!isTime(v['created_at'])) return 'created_at';
  if (!(v['ended'] === null || isEnded(v['ended']))) return 'ended';
  if (!(v['outcome'] === null || isOutcome(v['outcome']))) return 'outcome';
  if (typeof v['outcome_omitted'] !== 'boolean') return 'outcome_omitted';
  if (v['outcome'] !== null && (v['ended'] as { by?: unknown } | null)?.by !== 'settled') return 'an outcome without a settle';
  return null;
}

function isEnded(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  const e = value as Record<string, unknown>;
  return isTime(e['at']) && (e['by'] === 'settled' || e['by'] === 'server_exit');
}

function isOutcome(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  const o = value as Record<string, unknown>;
  const error = o['error'];
  const errorOk =
    error === null ||
    (isPlainObject(error) &&
      isText((error as Record<string, unknown>)['code'], 64) &&
      isText((error as Record<string, unknown>)['message'], MAX_TEXT_CHARS));
  return (
    typeof o['ok'] === 'boolean' &&
    isText(o['summary'], MAX_TEXT_CHARS) &&
    errorOk &&
    (o['ok'] === true) === (error === null) &&
    (o['result'] === null || isPlainObject(o['result'])) &&
    typeof o['text'] === 'string' &&
    typeof o['cancelled'] === 'boolean'
  );
}

function isText(value: unknown, maxChars: number): value is string {
  return typeof value === 'string' && value.length <= maxChars;
}

/** An ISO timestamp as Date#toISOString writes it. */
function isTime(value: unknown): value is string {
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) && Number.isFinite(Date.parse(value));
}

function invalid(reason: string): DecodedRecord {
  return { kind: 'invalid', reason };
}
