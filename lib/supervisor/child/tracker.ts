/**
 * Remembers every process that belonged to the run, however it got away:
 * - members of the supervisor's own process group and session (a child may start a new group inside it);
 * - descendants by ppid links (the native Bash tool runs commands in a session of their own);
 * - members of any session or group that a tracked process created: a background job keeps the session
 *   and group ids of its shell after the shell exits and it is re-parented;
 * - processes started since the run began whose environment carries the run's marker (found by a
 *   per-process look at /proc/<pid>/environ, once per process), so an orphan re-parented before any scan
 *   saw it, or a double-forked daemon, is still found.
 * Identities (pid + start time) are kept after re-parenting, so orphans are still ended; a recycled pid
 * never matches.
 */
import type { ProcessIdentity } from '../protocol.ts';
import { collectDescendants, identityKey, isLive, type ProcStat } from '../../process/proc-stat.ts';
import { isOurs, lead, markerOf, remember, type MarkerLookup, type TrackerState } from './tracker-state.ts';

export { MAX_TRACKED_PROCESSES, type MarkerLookup } from './tracker-state.ts';

export interface RunTracker {
  /** Adds a process the supervisor itself started (a probe or the native). */
  addRoot(identity: ProcessIdentity): void;
  /**
   * Session leaders started since the run began under the supervisor's user, not otherwise the run's, whose
   * environment could not be read (non-dumpable, as ssh-agent makes itself): nobody can tell whether they carry
   * the marker, so cleanup cannot be proven while one of them lives.
   */
  unverifiable(table: readonly ProcStat[]): ProcStat[];
  /**
   * Folds one process-table snapshot into the tracked set. `vanished`: pids its listing named that were gone
   * when read.
   */
  observe(table: readonly ProcStat[], vanished?: readonly number[]): void;
  /**
   * Whether the last snapshot could show the run's absence: no listed pid vanished, and no process became a
   * zombie, unless the snapshot before had settled it as a stranger (a process of the run that died after the
   * listing may have forked a child that no listing named), and no stranger's marker was left in doubt.
   */
  lastScanComplete(): boolean;
  /**
   * Folds in what changed since the last look (lib/process/proc-view.ts): `fresh` are the processes born since
   * and the tracked ones read again; `view` the whole table by pid, strangers as last seen. Judges nothing.
   */
  observeDelta(fresh: readonly ProcStat[], view: ReadonlyMap<number, ProcStat>): void;
  /** Identities tracked now (for reading them again between full scans). */
  trackedIdentities(): ProcessIdentity[];
  /** Processes of the run still alive in `table` (the supervisor itself excluded), sorted by pid. */
  remaining(table: readonly ProcStat[]): ProcStat[];
  trackedCount(): number;
  /** True once a process could not be remembered because the cap was reached: cleanup is then unprovable. */
  overflowed(): boolean;
}

export interface TrackerOptions {
  readonly selfPid: number;
  /** The supervisor leads its own session and group: every member of them is the run's. */
  readonly groupMode: boolean;
  readonly roots: readonly ProcessIdentity[];
  readonly marker: MarkerLookup | null;
}

export function createRunTracker(options: TrackerOptions): RunTracker {
  const t: TrackerState = {
    selfPid: options.selfPid,
    groupMode: options.groupMode,
    marker: options.marker,
    tracked: new Map(),
    ownedSessions: new Map(),
    ownedGroups: new Map(),
    markerChecked: new Map(),
    observation: 0,
    settledStrangers: new Map(),
    seenDead: new Set(),
    seenDeadPids: new Set(),
    complete: false,
    previousKeys: new Set(),
    overflow: false,
  };
  for (const root of options.roots) {
    t.tracked.set(identityKey(root), root);
    t.previousKeys.add(identityKey(root));
  }
  return {
    addRoot(identity) {
      // Alive now: as if the previous scan had seen it, so one scan listed before its birth keeps it.
      t.tracked.set(identityKey(identity), identity);
      t.previousKeys.add(identityKey(identity));
    },
    observe(table, vanished = []) {
      observe(t, table, vanished);
    },
    lastScanComplete: () => t.complete,
    observeDelta(fresh, view) {
      observeDelta(t, fresh, view);
    },
    trackedIdentities: () => [...t.tracked.values()],
    remaining: (table) => remaining(t, table),
    unverifiable: (table) => unverifiable(t, table),
    trackedCount: () => t.tracked.size,
    overflowed: () => t.overflow,
  };
}

function observe(t: TrackerState, table: readonly ProcStat[], vanished: readonly number[]): void {
  t.observation++;
  const live = table.filter((stat) => isLive(stat) && stat.pid !== t.selfPid);
  forgetGone(t, live);
  const byPid = new Map(live.map((s) => [s.pid, s]));
  for (const stat of live) if (markerOf(t, stat) === true) remember(t, stat);
  for (const stat of collectDescendants(live, [...t.tracked.values()])) remember(t, stat);
  adoptUntilStable(t, live, byPid);
  settle(t, table, vanished, byPid);
}

/** Drops what a full snapshot shows gone: owned ids nobody holds, marker look-ups and tracked identities of the dead. */
function forgetGone(t: TrackerState, live: readonly ProcStat[]): void {
  // An id whose last member is gone may be reused by a stranger: forget it before adopting by it.
  const sessionsInUse = new Set(live.map((s) => s.sid));
  const groupsInUse = new Set(live.map((s) => s.pgid));
  for (const sid of t.ownedSessions.keys()) if (!sessionsInUse.has(sid)) t.ownedSessions.delete(sid);
  for (const pgid of t.ownedGroups.keys()) if (!groupsInUse.has(pgid)) t.ownedGroups.delete(pgid);
  const liveKeys = new Set(live.map(identityKey));
  for (const key of t.markerChecked.keys()) if (!liveKeys.has(key)) t.markerChecked.delete(key);
  // A scan lists /proc before it reads each entry, so a process born after the listing is missing from
  // it though alive; one missing from two scans in a row is dead (pid + start time never come back).
  for (const key of t.tracked.keys()) if (!liveKeys.has(key) && !t.previousKeys.has(key)) t.tracked.delete(key);
  t.previousKeys = liveKeys;
}

/** Sessions and groups grow the set and the set grows them: repeat until nothing new is adopted. */
function adoptUntilStable(t: TrackerState, live: readonly ProcStat[], byPid: ReadonlyMap<number, ProcStat>): void {
  for (let changed = true; changed;) {
    changed = false;
    for (const stat of live) {
      if (!t.tracked.has(identityKey(stat))) {
        if (!isOurs(t, stat, byPid)) continue;
        remember(t, stat);
        if (!t.tracked.has(identityKey(stat))) continue;
        changed = true;
      }
      changed = lead(t, stat) || changed;
    }
    if (changed) for (const stat of collectDescendants(live, [...t.tracked.values()])) remember(t, stat);
  }
}

/** Judges the snapshot just folded in (see lastScanComplete) and keeps what the next one is judged against. */
function settle(t: TrackerState, table: readonly ProcStat[], vanished: readonly number[], byPid: ReadonlyMap<number, ProcStat>): void {
  let whole = vanished.every((pid) => t.settledStrangers.has(pid) || t.seenDeadPids.has(pid));
  const strangers = new Map<number, string>();
  const dead = new Set<string>();
  const deadPids = new Set<number>();
  for (const stat of table) {
    if (stat.pid === t.selfPid) continue;
    const key = identityKey(stat);
    if (!isLive(stat)) {
      dead.add(key);
      deadPids.add(stat.pid);
      if (!t.seenDead.has(key) && t.settledStrangers.get(stat.pid) !== stat.start) whole = false;
    } else if (!t.tracked.has(key) && !isOurs(t, stat, byPid)) {
      if (markerOf(t, stat) === 'pending') whole = false;
      else strangers.set(stat.pid, stat.start);
    }
  }
  t.settledStrangers = strangers;
  t.seenDead = dead;
  t.seenDeadPids = deadPids;
  t.complete = whole;
}

function observeDelta(t: TrackerState, fresh: readonly ProcStat[], view: ReadonlyMap<number, ProcStat>): void {
  t.observation++;
  for (let changed = true; changed;) {
    changed = false;
    for (const stat of fresh) {
      if (!isLive(stat) || stat.pid === t.selfPid) continue;
      if (!t.tracked.has(identityKey(stat))) {
        const parent = view.get(stat.ppid);
        const byParent = parent !== undefined && isLive(parent) && t.tracked.has(identityKey(parent));
        if (!byParent && !isOurs(t, stat, view) && markerOf(t, stat) !== true) continue;
        remember(t, stat);
        if (!t.tracked.has(identityKey(stat))) continue;
        changed = true;
      }
      changed = lead(t, stat) || changed;
    }
  }
}

function remaining(t: TrackerState, table: readonly ProcStat[]): ProcStat[] {
  const out = new Map<number, ProcStat>();
  const byPid = new Map(table.filter(isLive).map((s) => [s.pid, s]));
  for (const stat of table) {
    if (stat.pid === t.selfPid || !isLive(stat)) continue;
    if (isOurs(t, stat, byPid) || t.tracked.has(identityKey(stat))) out.set(stat.pid, stat);
  }
  return [...out.values()].sort((a, b) => a.pid - b.pid);
}

function unverifiable(t: TrackerState, table: readonly ProcStat[]): ProcStat[] {
  const { marker } = t;
  if (marker === null) return [];
  const byPid = new Map(table.filter(isLive).map((s) => [s.pid, s]));
  // Only a session leader (a daemon: ssh-agent, gpg-agent) is suspect; a foreign non-dumpable program run
  // from a terminal (sudo) is not, so a busy machine does not make every run unprovable.
  return table.filter(
    (stat) =>
      stat.pid !== t.selfPid &&
      isLive(stat) &&
      stat.sid === stat.pid &&
      !t.tracked.has(identityKey(stat)) &&
      !isOurs(t, stat, byPid) &&
      t.markerChecked.get(identityKey(stat))?.found === null &&
      marker.sameUser(stat.pid),
  );
}
