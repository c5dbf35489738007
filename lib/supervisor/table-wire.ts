/**
 * The wire form of the table exchange (protocol.ts): a supervisor's `table_request` report line and the server's
 * `table` control line. Both sides validate strictly (exactly these keys, every value in its bounds): a line off
 * this shape is neither, and an answer is never taken as a table unless it is this. The output travels base64, so
 * the line's size follows from the byte bound whatever bytes ps printed.
 */
import { isPsStat, MAX_PID, PS_FAILURE_CODES, PS_LSTART_NORMAL, psFailure, type PsFailure, type PsRow } from '../process/ps-table.ts';
import { isPlainObject, parseJsonObject } from '../util/json.ts';
import {
  TABLE_ANSWER_LINE_MAX_BYTES,
  TABLE_FAILURE_MESSAGE_MAX_CHARS,
  TABLE_OUTPUT_MAX_BYTES,
  TABLE_REQUEST_LINE_MAX_BYTES,
  TABLE_REQUEST_WAIT_MAX_MS,
  type TableAnswer,
  type TableAnswerMessage,
  type TableRequest,
} from './protocol.ts';
import { assertNever } from '../util/assert-never.ts';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const TABLE_B64_MAX_CHARS = 4 * Math.ceil(TABLE_OUTPUT_MAX_BYTES / 3);

const isId = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const hasKeys = (v: Record<string, unknown>, keys: readonly string[]): boolean =>
  Object.keys(v).length === keys.length && keys.every((k) => Object.hasOwn(v, k));

export function formatTableRequest(id: number, waitMs: number): string {
  return JSON.stringify({ type: 'table_request', id, wait_ms: waitMs }) + '\n';
}

/** A report line that is a table request, or null (anything else, or longer than TABLE_REQUEST_LINE_MAX_BYTES). */
export function parseTableRequest(line: string): TableRequest | null {
  if (line.length > TABLE_REQUEST_LINE_MAX_BYTES || Buffer.byteLength(line) > TABLE_REQUEST_LINE_MAX_BYTES) return null;
  const v = parseJsonObject(line);
  if (v === null || v['type'] !== 'table_request' || !hasKeys(v, ['type', 'id', 'wait_ms']) || !isId(v['id'])) return null;
  const waitMs = v['wait_ms'];
  if (!isId(waitMs) || waitMs > TABLE_REQUEST_WAIT_MAX_MS) return null;
  return { type: 'table_request', id: v['id'], waitMs };
}

/**
 * The control line answering request `id`, at most TABLE_ANSWER_LINE_MAX_BYTES: an output over
 * TABLE_OUTPUT_MAX_BYTES is answered as the failure that says so, never cut.
 */
export function formatTableAnswer(id: number, answer: TableAnswer): string {
  switch (answer.kind) {
    case 'output':
      if (answer.stdout.length > TABLE_OUTPUT_MAX_BYTES)
        return formatTableAnswer(
          id,
          psFailure(
            'ps_output_too_large',
            `printed ${answer.stdout.length} bytes, more than a table answer carries (${TABLE_OUTPUT_MAX_BYTES}, TABLE_OUTPUT_MAX_BYTES)`,
          ),
        );
      return JSON.stringify({ type: 'table', id, kind: 'output', ps_b64: answer.stdout.toString('base64') }) + '\n';
    case 'rows':
      return (
        JSON.stringify({
          type: 'table',
          id,
          kind: 'rows',
          rows: answer.rows.map((r) => [r.pid, r.ppid, r.pgid, r.stat, r.start?.lstart ?? null, r.command]),
        }) + '\n'
      );
    case 'failure': {
      const message =
        answer.message.length > TABLE_FAILURE_MESSAGE_MAX_CHARS
          ? `${answer.message.slice(0, TABLE_FAILURE_MESSAGE_MAX_CHARS - 1)}…`
          : answer.message;
      return JSON.stringify({ type: 'table', id, kind: 'failure', code: answer.code, message, line: answer.line }) + '\n';
    }
    case 'refused':
      return JSON.stringify({ type: 'table', id, kind: 'refused', reason: answer.reason }) + '\n';
    default:
      return assertNever(answer);
  }
}

/**
 * A parsed control object that is a table answer, or null when it is off-shape in any way (its `type` already
 * read as `table`; `lineBytes` is the whole line's size).
 */
export function parseTableAnswer(v: Record<string, unknown>, lineBytes: number): TableAnswerMessage | null {
  if (!isPlainObject(v) || v['type'] !== 'table' || lineBytes > TABLE_ANSWER_LINE_MAX_BYTES || !isId(v['id'])) return null;
  const answer = parseAnswer(v);
  return answer === null ? null : { type: 'table', id: v['id'], answer };
}

function parseAnswer(v: Record<string, unknown>): TableAnswer | null {
  switch (v['kind']) {
    case 'output': {
      const b64 = v['ps_b64'];
      if (!hasKeys(v, ['type', 'id', 'kind', 'ps_b64']) || typeof b64 !== 'string') return null;
      if (b64.length > TABLE_B64_MAX_CHARS || b64.length % 4 !== 0 || !BASE64.test(b64)) return null;
      const stdout = Buffer.from(b64, 'base64');
      return stdout.length <= TABLE_OUTPUT_MAX_BYTES ? { kind: 'output', stdout } : null;
    }
    case 'rows': {
      const rows = v['rows'];
      if (!hasKeys(v, ['type', 'id', 'kind', 'rows']) || !Array.isArray(rows)) return null;
      return parseRows(rows);
    }
    case 'failure':
      return hasKeys(v, ['type', 'id', 'kind', 'code', 'message', 'line']) ? parseFailure(v) : null;
    case 'refused':
      return hasKeys(v, ['type', 'id', 'kind', 'reason']) && v['reason'] === 'too_many_pending'
        ? { kind: 'refused', reason: 'too_many_pending' }
        : null;
    default:
      return null;
  }
}

function parseFailure(v: Record<string, unknown>): PsFailure | null {
  const code = PS_FAILURE_CODES.find((c) => c === v['code']);
  const { message, line } = { message: v['message'], line: v['line'] };
  if (code === undefined || typeof message !== 'string' || !message.startsWith('ps: ') || message.length > TABLE_FAILURE_MESSAGE_MAX_CHARS)
    return null;
  if (!(line === null || (typeof line === 'number' && Number.isSafeInteger(line) && line >= 1))) return null;
  return { kind: 'failure', code, tool: 'ps', message, line };
}

const isPid = (v: unknown): v is number => isId(v) && v <= MAX_PID;

/** Rows as the server parsed them, each checked as the supervisor's own parse would check it; a repeated pid refuses all. */
function parseRows(rows: readonly unknown[]): TableAnswer | null {
  const out: PsRow[] = [];
  const seen = new Set<number>();
  for (const r of rows) {
    if (!Array.isArray(r) || r.length !== 6) return null;
    const [pid, ppid, pgid, stat, lstart, command] = r as unknown[];
    if (!isPid(pid) || !isPid(ppid) || !isPid(pgid) || seen.has(pid)) return null;
    if (typeof stat !== 'string' || !isPsStat(stat)) return null;
    if (!(lstart === null || (typeof lstart === 'string' && PS_LSTART_NORMAL.test(lstart)))) return null;
    if (typeof command !== 'string' || command.length === 0 || command.includes('\n')) return null;
    seen.add(pid);
    out.push({ pid, ppid, pgid, stat, start: lstart === null ? null : { lstart, resolution: 'second' }, command });
  }
  return { kind: 'rows', rows: out };
}
