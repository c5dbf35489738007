/**
 * Pure reading of Linux /proc/<pid>/stat lines and the process-identity rules built on them.
 * A pid alone can be recycled; pid + start time (field 22) names one process for the life of the boot.
 */
/** One process for the life of the boot: a pid alone can be recycled, pid + start time cannot. */
export interface ProcessIdentity {
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot): pid + start never repeats. */
  readonly start: string;
}

export interface ProcStat {
  readonly pid: number;
  readonly state: string;
  readonly ppid: number;
  readonly pgid: number;
  readonly sid: number;
  /** Field 22: start time in clock ticks since boot, kept as a decimal string (never compared as a float). */
  readonly start: string;
  /** A kernel thread (PF_KTHREAD in field 9): it has no environment and is never a run's. */
  readonly kthread?: boolean;
}

/** Fields after the ")" that closes comm: index 0 is field 3 (state). */
const STATE_INDEX = 0;
const PPID_INDEX = 1;
const PGID_INDEX = 2;
const SID_INDEX = 3;
const FLAGS_INDEX = 6;
/** PF_KTHREAD, include/linux/sched.h. */
const PF_KTHREAD = 0x00200000;
const START_INDEX = 19;

/** A stat line cut at its command name: comm may hold spaces and ")", so it ends at the last ")". */
export interface ProcStatLine {
  readonly pid: number;
  /** Field 2 without its parentheses: the name of the last file the process exec'd (at most 15 bytes, or 63). */
  readonly comm: string;
  /** Fields 3 onward: index 0 is field 3 (state). */
  readonly fields: readonly string[];
}

/** The one reading of a /proc/<pid>/stat text; null when it is not a stat line. */
export function splitProcStat(text: string): ProcStatLine | null {
  const open = text.indexOf(' (');
  const close = text.lastIndexOf(')');
  if (open <= 0 || close < open) return null;
  const pid = Number(text.slice(0, open));
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  return {
    pid,
    comm: text.slice(open + 2, close),
    fields: text
      .slice(close + 2)
      .trim()
      .split(' '),
  };
}

/** Parses one stat line; null when it is not a well-formed stat line. comm may hold spaces and ")". */
export function parseProcStat(text: string): ProcStat | null {
  const line = splitProcStat(text);
  if (line === null) return null;
  const { pid, fields: rest } = line;
  const state = rest[STATE_INDEX];
  const ppid = Number(rest[PPID_INDEX]);
  const pgid = Number(rest[PGID_INDEX]);
  const sid = Number(rest[SID_INDEX]);
  const start = rest[START_INDEX];
  if (state === undefined || start === undefined || !/^\d+$/.test(start)) return null;
  if (![ppid, pgid, sid].every((n) => Number.isSafeInteger(n) && n >= 0)) return null;
  const flags = Number(rest[FLAGS_INDEX]);
  // Bit tests on a double: the flags word is 32 bits, within what `>>> 0` keeps exact.
  if (Number.isSafeInteger(flags) && ((flags >>> 0) & PF_KTHREAD) !== 0) return { pid, state, ppid, pgid, sid, start, kthread: true };
  return { pid, state, ppid, pgid, sid, start };
}

const SPACE = 0x20;
const CLOSE_PAREN = 0x29;

/**
 * parseProcStat over the bytes of a read, without making strings of the 50 fields: a scan reads every
 * process's stat, and the split costs more than the read. Same fields, same rules; null for anything
 * unusual, which the caller then hands to parseProcStat.
 */
export function parseProcStatBytes(bytes: Uint8Array, length: number): ProcStat | null {
  let close = length - 1;
  while (close > 0 && bytes[close] !== CLOSE_PAREN) close--;
  if (close <= 0) return null;
  const pid = leadingInt(bytes, 0);
  const ints: number[] = [];
  let at = close + 2;
  const state = String.fromCharCode(bytes[at] ?? 0);
  let startAt = -1;
  let startEnd = -1;
  for (let index = STATE_INDEX; index <= START_INDEX && at < length; index++) {
    if (index >= PPID_INDEX && index <= FLAGS_INDEX) ints.push(leadingInt(bytes, at));
    if (index === START_INDEX) startAt = at;
    while (at < length && bytes[at] !== SPACE) at++;
    if (index === START_INDEX) startEnd = at;
    at++;
  }
  const [ppid = -1, pgid = -1, sid = -1, , , flags = -1] = ints;
  if (startAt < 0 || startEnd <= startAt || pid <= 0 || ppid < 0 || pgid < 0 || sid < 0 || flags < 0) return null;
  let start = '';
  for (let i = startAt; i < startEnd; i++) {
    const c = bytes[i] ?? 0;
    if (c < 48 || c > 57) return null;
    start += String.fromCharCode(c);
  }
  return (flags & PF_KTHREAD) !== 0 ? { pid, state, ppid, pgid, sid, start, kthread: true } : { pid, state, ppid, pgid, sid, start };
}

/** The decimal digits at `at`; -1 when there are none or too many for an exact number. */
function leadingInt(bytes: Uint8Array, at: number): number {
  let value = 0;
  let digits = 0;
  for (let c = bytes[at] ?? 0; c >= 48 && c <= 57; c = bytes[at + ++digits] ?? 0) value = value * 10 + (c - 48);
  return digits === 0 || digits > 15 ? -1 : value;
}

/** Zombies (Z) and dying tasks (X) have finished running: they hold a pid but nothing else. */
export function isLive(stat: ProcStat): boolean {
  return stat.state !== 'Z' && stat.state !== 'X';
}

/** True only when `stat` is the very process `id` named: same pid and same start time. */
export function isSameProcess(id: ProcessIdentity, stat: ProcStat | null): boolean {
  return stat !== null && stat.pid === id.pid && stat.start === id.start;
}

/**
 * Whether `stat` (its pid's /proc entry now, null when there is none) shows the process `id` named gone. Only an
 * identity with a /proc start time (clock ticks) can be judged so: one a `ps` table gave (pid + lstart, the
 * portable source) is never shown gone by /proc, so a survivor it names stays a survivor.
 */
export function isGoneIn(id: ProcessIdentity, stat: ProcStat | null): boolean {
  if (!/^\d+$/.test(id.start)) return false;
  return !(stat !== null && isSameProcess(id, stat) && isLive(stat));
}

export function identityOf(stat: ProcStat): ProcessIdentity {
  return { pid: stat.pid, start: stat.start };
}

export function identityKey(id: ProcessIdentity): string {
  return `${id.pid}:${id.start}`;
}

/**
 * Every process in `table` that descends (by ppid) from one of `roots`, roots excluded.
 * Roots are identities so a recycled pid does not adopt a stranger's children.
 */
export function collectDescendants(table: readonly ProcStat[], roots: readonly ProcessIdentity[]): ProcStat[] {
  const byPid = new Map<number, ProcStat>();
  const children = new Map<number, ProcStat[]>();
  for (const stat of table) {
    byPid.set(stat.pid, stat);
    const list = children.get(stat.ppid);
    if (list) list.push(stat);
    else children.set(stat.ppid, [stat]);
  }
  const found: ProcStat[] = [];
  const seen = new Set<number>();
  const queue: number[] = [];
  for (const root of roots) {
    if (isSameProcess(root, byPid.get(root.pid) ?? null)) {
      seen.add(root.pid);
      queue.push(root.pid);
    }
  }
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    for (const child of children.get(pid) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/** Live members of process group `pgid`, excluding `selfPid`. */
export function groupMembers(table: readonly ProcStat[], pgid: number, selfPid: number): ProcStat[] {
  return table.filter((s) => s.pgid === pgid && s.pid !== selfPid && isLive(s));
}

/** Compares two decimal start-time strings numerically without floating point. */
export function compareStart(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}
