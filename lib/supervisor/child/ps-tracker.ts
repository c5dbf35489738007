/**
 * The portable run tracker: what belongs to the run, judged from `ps` rows alone (pid, ppid, pgid, stat, lstart,
 * command: no session, no environment, no marker). Pure: it folds tables it is given (lib/process/ps-table.ts).
 * - Tracked: members of the supervisor's own process group (it leads it), the processes the supervisor started
 *   (roots), descendants by ppid of tracked processes, and members of any group whose id is the pid of a
 *   tracked process (a setsid shell's group: its `cmd &` jobs keep it after the shell exits).
 * - A process that got away between two tables (its parent gone, a group or session of its own) cannot be told
 *   from anyone's orphan: every live orphan (ppid 1) started at or after the supervisor and not tracked is an
 *   unattributed orphan. It is reported and never signalled, and the run is not confirmed while one lives.
 * - Any failure of `ps` is kept: a run whose tracking missed a table is never confirmed.
 * - A tracked identity is forgotten only when the table lists its pid with another start, or no process has
 *   that pid any more (signal 0). A table may leave out rows (the server sends each supervisor only the rows it
 *   can need: lib/process/ps-relevant.ts), so a process that is merely unlisted stays tracked, under the row
 *   last seen: it is remaining, never signalled (no latest row vouches for it), and the run is not confirmed.
 * Identities are weak (pid + lstart, one second): see isSameWeakProcess.
 */
import { type PsFailure, type PsRow, type PsTableResult } from '../../process/ps-table.ts';
import { MAX_TRACKED_PROCESSES } from './tracker-state.ts';

/** How much of an unattributed orphan's command a report quotes. */
export const ORPHAN_COMMAND_MAX_CHARS = 80;

export interface PsRunTracker {
  /** A child the supervisor itself started (a probe or the native): its row is the run's once a table shows it. */
  addRoot(pid: number): void;
  /** That child was reaped: its pid no longer names it (its identity, once a table showed it, stays tracked). */
  dropRoot(pid: number): void;
  /** Folds one table (or a failure of `ps`) in. */
  observe(result: PsTableResult): void;
  /** Whether the latest read gave a whole table that lists the supervisor itself (earlier failures aside: see failure). */
  lastComplete(): boolean;
  /** Tracked processes alive in the latest table (zombies and the supervisor excluded), by pid. */
  remaining(): PsRow[];
  /** Live orphans (ppid 1) started at or after the supervisor that are not tracked, by pid: never signalled. */
  unattributed(): PsRow[];
  /** The latest table's row of `pid` (for the identity check before a signal). */
  latest(pid: number): PsRow | undefined;
  /** Whether the supervisor leads its own group (from its own row); null before the first whole table. */
  groupMode(): boolean | null;
  /** The first failure of `ps` (or a table without the supervisor in it); null when none. */
  failure(): PsFailure | null;
  trackedCount(): number;
  overflowed(): boolean;
}

interface PsTrackerState {
  readonly selfPid: number;
  readonly roots: Set<number>;
  /** Tracked identities by `pid@lstart` (`pid@-` for a row without a start), with the row last seen of each. */
  readonly tracked: Map<string, PsRow>;
  /** Whether some process has this pid now (signal 0): injected, the tracker itself stays pure. */
  readonly pidExists: (pid: number) => boolean;
  /** Group ids led by a tracked process, with the leader's key; kept while some row still carries the id. */
  readonly ownedGroups: Map<number, string>;
  table: ReadonlyMap<number, PsRow>;
  floor: string | null;
  leadsGroup: boolean | null;
  complete: boolean;
  failed: PsFailure | null;
  overflow: boolean;
}

export function createPsRunTracker(selfPid: number, pidExists: (pid: number) => boolean): PsRunTracker {
  const t: PsTrackerState = {
    selfPid,
    pidExists,
    roots: new Set(),
    tracked: new Map(),
    ownedGroups: new Map(),
    table: new Map(),
    floor: null,
    leadsGroup: null,
    complete: false,
    failed: null,
    overflow: false,
  };
  return {
    addRoot(pid) {
      t.roots.add(pid);
    },
    dropRoot(pid) {
      t.roots.delete(pid);
    },
    observe: (result) => {
      observe(t, result);
    },
    lastComplete: () => t.complete,
    remaining: () => [...t.tracked.values()].sort((a, b) => a.pid - b.pid),
    unattributed: () => liveRows(t).filter((row) => isUnattributedOrphan(t, row)),
    latest: (pid) => t.table.get(pid),
    groupMode: () => t.leadsGroup,
    failure: () => t.failed,
    trackedCount: () => t.tracked.size,
    overflowed: () => t.overflow,
  };
}

/** A zombie has exited: only its parent's wait is missing, it can start nothing more. */
export function isZombieRow(row: PsRow): boolean {
  return row.stat.startsWith('Z');
}

function keyOf(row: PsRow): string {
  return `${row.pid}@${row.start?.lstart ?? '-'}`;
}

function liveRows(t: PsTrackerState): PsRow[] {
  return [...t.table.values()].filter((row) => row.pid !== t.selfPid && !isZombieRow(row)).sort((a, b) => a.pid - b.pid);
}

function observe(t: PsTrackerState, result: PsTableResult): void {
  t.complete = false;
  if (result.kind === 'failure') {
    t.failed ??= result;
    return;
  }
  const self = result.rows.find((row) => row.pid === t.selfPid);
  if (self === undefined || self.start === null) {
    t.failed ??= {
      kind: 'failure',
      code: 'ps_output_invalid',
      tool: 'ps',
      message: 'ps: its table does not show the supervisor itself',
      line: null,
    };
    return;
  }
  t.floor ??= self.start.lstart;
  t.leadsGroup = self.pgid === t.selfPid;
  const previous = t.tracked;
  t.table = new Map(result.rows.map((row) => [row.pid, row]));
  adoptUntilStable(t, new Set([...previous.values()].map((row) => row.pid)));
  forgetGone(t);
  t.complete = true;
}

/** Own group, roots, ppid descendants and owned groups grow the tracked set, and it grows them: to a fixed point. */
function adoptUntilStable(t: PsTrackerState, trackedBefore: ReadonlySet<number>): void {
  const live = liveRows(t);
  for (let changed = true; changed;) {
    changed = false;
    for (const row of live) {
      if (!t.tracked.has(keyOf(row)) && belongs(t, row, trackedBefore)) {
        if (t.tracked.size >= MAX_TRACKED_PROCESSES) {
          t.overflow = true;
          continue;
        }
        t.tracked.set(keyOf(row), row);
        changed = true;
      }
      if (t.tracked.has(keyOf(row)) && row.pgid === row.pid && !t.ownedGroups.has(row.pid)) {
        t.ownedGroups.set(row.pid, keyOf(row));
        changed = true;
      }
    }
  }
}

function belongs(t: PsTrackerState, row: PsRow, trackedBefore: ReadonlySet<number>): boolean {
  if (row.ppid === t.selfPid) return t.roots.has(row.pid); // any other child of the supervisor is its own `ps`
  if (t.leadsGroup === true && row.pgid === t.selfPid) return true;
  if (ownsGroup(t, row.pgid)) return true;
  const parent = t.table.get(row.ppid);
  // A parent listed is the run's only by its identity (its pid may be a stranger's now); a tracked parent that
  // exited while this table was read is not listed, and its pid is not reused that fast.
  if (parent !== undefined) return t.tracked.has(keyOf(parent));
  return row.ppid !== 1 && trackedBefore.has(row.ppid);
}

/** An owned group id still names the run's group unless its number now belongs to another process (reused). */
function ownsGroup(t: PsTrackerState, pgid: number): boolean {
  const leader = t.ownedGroups.get(pgid);
  if (leader === undefined) return false;
  const holder = t.table.get(pgid);
  return holder === undefined || keyOf(holder) === leader;
}

/**
 * Drops identities that are gone (pid + lstart never come back): listed dead (a zombie), its pid listed with
 * another start, or unlisted with no process of that pid; and groups nobody listed carries. Keeps every live
 * tracked row up to date.
 */
function forgetGone(t: PsTrackerState): void {
  const live = new Map(liveRows(t).map((row) => [keyOf(row), row]));
  for (const [key, seen] of t.tracked) {
    const now = live.get(key);
    if (now !== undefined) t.tracked.set(key, now);
    else if (t.table.has(seen.pid) || !t.pidExists(seen.pid)) t.tracked.delete(key);
  }
  const groupsInUse = new Set([...t.table.values()].map((row) => row.pgid));
  for (const pgid of t.ownedGroups.keys()) if (!groupsInUse.has(pgid)) t.ownedGroups.delete(pgid);
}

function isUnattributedOrphan(t: PsTrackerState, row: PsRow): boolean {
  if (row.ppid !== 1 || t.tracked.has(keyOf(row)) || inStrangersGroup(t, row)) return false;
  // A start ps could not read cannot be placed before the run: it counts against the proof.
  return t.floor === null || row.start === null || row.start.lstart >= t.floor;
}

/**
 * An orphan in a group whose leader lives and started in a second before the supervisor's is a stranger's: a
 * process joins only a group of its own session, a run's processes are in the supervisor's session or in ones
 * they made, and a session is made only by its first member, which leads its group. The leader's pid names
 * it still: a pid is not reused while a group carries it.
 */
function inStrangersGroup(t: PsTrackerState, row: PsRow): boolean {
  if (row.pgid === row.pid || t.floor === null) return false;
  const leader = t.table.get(row.pgid);
  return leader?.start != null && leader.start.lstart < t.floor && !t.tracked.has(keyOf(leader));
}

/** An orphan as a report names it: pid and its command cut to ORPHAN_COMMAND_MAX_CHARS. */
export function describeOrphan(row: PsRow): string {
  const command = row.command.length > ORPHAN_COMMAND_MAX_CHARS ? `${row.command.slice(0, ORPHAN_COMMAND_MAX_CHARS)}…` : row.command;
  return `${row.pid} (${command})`;
}
