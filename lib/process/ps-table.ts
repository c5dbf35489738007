/**
 * Pure reading of the system `ps` process table, the portable source's only view of other processes:
 * `ps -A -o pid=,ppid=,pgid=,stat=,lstart=,command=` under LC_ALL=C, which BSD ps (macOS) and procps both
 * answer in this form. Columns are space-separated and right- or left-justified; `lstart` is C-locale
 * strftime("%c") of the local start time (24 characters; BSD pads the column to 28), and `command` takes the
 * rest of the line, spaces included. The whole output is accepted or refused: a table with one unreadable
 * line, or cut before its last newline, is never taken for a complete one.
 */

/** The exact arguments the portable source runs `ps` with (LC_ALL=C in its environment). */
export const PS_ARGS = ['-A', '-o', 'pid=,ppid=,pgid=,stat=,lstart=,command='] as const;

/** Above any kernel's pid limit (Linux PID_MAX_LIMIT is 2^22, macOS PID_MAX 99,999): such a value is garbage. */
export const MAX_PID = 2 ** 22;

/** A `stat` column is a state letter (procps `t` for a traced stop is lower-case) and a few flag characters (procps `S<Ll`, BSD `Ss+`). */
const MAX_STAT_CHARS = 8;

/**
 * A start time as `ps` prints it, normalized to `YYYY-MM-DDTHH:MM:SS` local time (the system zone: the source
 * passes no TZ). It resolves one second: two processes started in the same second with the same pid (a pid
 * recycled within that second) share it, so it never proves as much as a /proc start time in clock ticks.
 */
export interface PsStart {
  readonly lstart: string;
  readonly resolution: 'second';
}

export interface PsRow {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  readonly stat: string;
  /** null where BSD ps printed `-` (a process whose start it could not read): such a row has no identity. */
  readonly start: PsStart | null;
  /** Arguments as `ps` shows them; leading spaces of the column are not kept. */
  readonly command: string;
}

/**
 * A process named by pid and `lstart`: weak, since the start resolves one second. Deliberately not a
 * ProcessIdentity (lib/process/proc-stat.ts, exact to the clock tick): it cannot be passed where one is needed.
 */
export interface WeakProcessIdentity {
  readonly pid: number;
  readonly lstart: string;
  readonly strength: 'weak_1s';
}

/** Every way the portable source can fail, closed: a table answer from the server carries one of these. */
export const PS_FAILURE_CODES = [
  'ps_not_found',
  'ps_spawn_failed',
  'ps_exit_nonzero',
  'ps_killed',
  'ps_timeout',
  'ps_output_too_large',
  'ps_output_invalid',
] as const;
export type PsFailureCode = (typeof PS_FAILURE_CODES)[number];

/** Every failure of the portable source names `ps`; `line` is the 1-based line of the output at fault, when one is. */
export interface PsFailure {
  readonly kind: 'failure';
  readonly code: PsFailureCode;
  readonly tool: 'ps';
  readonly message: string;
  readonly line: number | null;
}

export type PsTableResult = { readonly kind: 'table'; readonly rows: readonly PsRow[] } | PsFailure;

/** ps's raw output (it exited 0 within the bounds), not parsed yet; or why there is none. */
export type PsOutput = { readonly kind: 'output'; readonly stdout: Buffer } | PsFailure;

export function psFailure(code: PsFailureCode, message: string, line: number | null = null): PsFailure {
  return { kind: 'failure', code, tool: 'ps', message: `ps: ${message}`, line };
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

const ROW =
  /^ *(\d{1,7}) +(\d{1,7}) +(\d{1,7}) +(\S+) +(?:(-)|([A-Z][a-z]{2}) ([A-Z][a-z]{2}) ([ \d]\d) (\d\d):(\d\d):(\d\d) (\d{4})) +(\S.*)$/;

/**
 * Rows already parsed, by their whole line: a server parsing one table after another reads again only the lines
 * that changed (most processes print the same line every time). `next` receives this table's lines, so it holds
 * at most one table; the caller swaps it in for `previous` once the table is read.
 */
export interface PsRowMemo {
  readonly previous: ReadonlyMap<string, PsRow>;
  readonly next: Map<string, PsRow>;
}

/** Parses the whole output; any line that is not a row, a cut last line or a repeated pid refuses all of it. */
export function parsePsTable(output: string, memo?: PsRowMemo): PsTableResult {
  if (output.length === 0) return psFailure('ps_output_invalid', 'printed no process (a table always holds ps itself)');
  if (!output.endsWith('\n')) return psFailure('ps_output_invalid', 'output ends inside a line (cut short)');
  const lines = output.slice(0, -1).split('\n');
  const rows: PsRow[] = [];
  const seen = new Set<number>();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const row = memo?.previous.get(line) ?? parsePsRow(line);
    if (typeof row !== 'string') memo?.next.set(line, row);
    if (typeof row === 'string') return psFailure('ps_output_invalid', `line ${i + 1} is not a process row: ${row}`, i + 1);
    if (seen.has(row.pid)) return psFailure('ps_output_invalid', `line ${i + 1} repeats a pid`, i + 1);
    seen.add(row.pid);
    rows.push(row);
  }
  return { kind: 'table', rows };
}

/** One line to a row, or what is wrong with it (never the line itself: it may hold another process's arguments). */
export function parsePsRow(line: string): PsRow | string {
  const m = ROW.exec(line);
  if (m === null) return 'not pid, ppid, pgid, stat, lstart and command';
  const [pid, ppid, pgid] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (![pid, ppid, pgid].every((n) => n <= MAX_PID)) return `a pid over ${MAX_PID}`;
  const stat = m[4]!;
  if (!isPsStat(stat)) return 'an impossible stat';
  const command = m[13]!;
  if (m[5] === '-') return { pid, ppid, pgid, stat, start: null, command };
  const lstart = normalizeLstart(m.slice(6, 13) as [string, string, string, string, string, string, string]);
  if (lstart === null) return 'an impossible lstart';
  return { pid, ppid, pgid, stat, start: { lstart, resolution: 'second' }, command };
}

/** A `stat` column as a table may hold it. */
export function isPsStat(stat: string): boolean {
  return stat.length <= MAX_STAT_CHARS && /^[A-Za-z][A-Za-z<>+]*$/.test(stat);
}

/** A start as parsePsRow normalizes it (`YYYY-MM-DDTHH:MM:SS`); a table passed on in that form is checked against it. */
export const PS_LSTART_NORMAL = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/;

/** `Thu Dec  3 17:16:48 2026` (split) to `2026-12-03T17:16:48`; null for a date that does not exist. */
function normalizeLstart([weekday, month, day, hh, mm, ss, year]: readonly [string, string, string, string, string, string, string]):
  string | null {
  const monthIndex = MONTHS.indexOf(month as (typeof MONTHS)[number]);
  const [d, h, min, s, y] = [Number(day.trim()), Number(hh), Number(mm), Number(ss), Number(year)];
  if (monthIndex < 0 || d < 1 || h > 23 || min > 59 || s > 60 || y < 1970) return null;
  // The calendar decides: Feb 30 does not exist, and the weekday must be the date's own.
  const date = new Date(Date.UTC(y, monthIndex, d));
  if (date.getUTCMonth() !== monthIndex || WEEKDAYS[date.getUTCDay()] !== weekday) return null;
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${year}-${pad(monthIndex + 1)}-${pad(d)}T${hh}:${mm}:${ss}`;
}

/** The weak identity of a row; null when ps gave no start for it. */
export function weakIdentityOf(row: PsRow): WeakProcessIdentity | null {
  return row.start === null ? null : { pid: row.pid, lstart: row.start.lstart, strength: 'weak_1s' };
}

/** True only when `row` shows the same pid with the same start second as `id` (never more than that). */
export function isSameWeakProcess(id: WeakProcessIdentity, row: PsRow | undefined): boolean {
  return row !== undefined && row.start !== null && row.pid === id.pid && row.start.lstart === id.lstart;
}
