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
import { collectDescendants, compareStart, identityKey, identityOf, isLive, type ProcStat } from '../../process/proc-stat.ts';

export interface RunTracker {
  /** Adds a process the supervisor itself started (a probe or the native). */
  addRoot(identity: ProcessIdentity): void;
  /**
   * Session leaders started since the run began under the supervisor's user, not otherwise the run's, whose
   * environment could not be read (non-dumpable, as ssh-agent makes itself): nobody can tell whether they carry
   * the marker, so cleanup cannot be proven while one of them lives.
   */
  unverifiable(table: readonly ProcStat[]): ProcStat[];
  /** Folds one process-table snapshot into the tracked set. */
  observe(table: readonly ProcStat[]): void;
  /** Processes of the run still alive in `table` (the supervisor itself excluded), sorted by pid. */
  remaining(table: readonly ProcStat[]): ProcStat[];
  trackedCount(): number;
  /** True once a process could not be remembered because the cap was reached: cleanup is then unprovable. */
  overflowed(): boolean;
}

/** How the tracker recognises a marked process. */
export interface MarkerLookup {
  /** Processes started before this start time (clock ticks since boot) cannot belong to the run. */
  readonly notBefore: string;
  /** null when the environment cannot be read. */
  hasMarker(pid: number): boolean | null;
  /** Whether `pid` runs as the supervisor's own user (an unreadable environment of another user's process says nothing). */
  sameUser(pid: number): boolean;
}

/** Live tracked identities are capped so a fork bomb cannot grow the supervisor without bound. */
export const MAX_TRACKED_PROCESSES = 4096;

export interface TrackerOptions {
  readonly selfPid: number;
  /** The supervisor leads its own session and group: every member of them is the run's. */
  readonly groupMode: boolean;
  readonly roots: readonly ProcessIdentity[];
  readonly marker: MarkerLookup | null;
}

export function createRunTracker(options: TrackerOptions): RunTracker {
  const { selfPid, groupMode, marker } = options;
  const tracked = new Map<string, ProcessIdentity>();
  /** Session and group ids created by tracked processes (the id is the creator's pid), with its identity key. */
  const ownedSessions = new Map<number, string>();
  const ownedGroups = new Map<number, string>();
  /** Marker look-ups already done, by identity (null: unreadable); pruned to the live table on every scan. */
  const markerChecked = new Map<string, { readonly found: boolean | null; readonly reads: number }>();
  /** Live identity keys of the previous scan: an identity absent from two scans in a row is dead. */
  let previousKeys = new Set<string>();
  let overflow = false;
  const remember = (stat: ProcStat): void => {
    if (stat.pid === selfPid) return;
    const key = identityKey(stat);
    if (tracked.has(key)) return;
    if (tracked.size >= MAX_TRACKED_PROCESSES) {
      overflow = true;
      return;
    }
    tracked.set(key, identityOf(stat));
  };
  /** An owned id still names our session or group unless its number now belongs to another live process. */
  const owns = (owned: ReadonlyMap<number, string>, id: number, byPid: ReadonlyMap<number, ProcStat>): boolean => {
    const creator = owned.get(id);
    if (creator === undefined) return false;
    const holder = byPid.get(id);
    return holder === undefined || identityKey(holder) === creator;
  };
  const isOurs = (stat: ProcStat, byPid: ReadonlyMap<number, ProcStat>): boolean =>
    (groupMode && (stat.pgid === selfPid || stat.sid === selfPid)) || owns(ownedSessions, stat.sid, byPid) || owns(ownedGroups, stat.pgid, byPid);
  /**
   * true, false, or null when the environment could not be read (asked again on the next scan). A "no" is
   * final only once two scans agree: a process caught between fork and exec, or while it exits, can read as
   * empty for an instant, and a run's process carries the marker from birth.
   */
  const markerOf = (stat: ProcStat): boolean | null => {
    if (marker === null || compareStart(stat.start, marker.notBefore) < 0) return false;
    const key = identityKey(stat);
    let state = markerChecked.get(key);
    if (state === undefined || state.found === null || (state.found === false && state.reads < 2)) {
      state = { found: marker.hasMarker(stat.pid), reads: (state?.reads ?? 0) + 1 };
      markerChecked.set(key, state);
    }
    return state.found;
  };
  for (const root of options.roots) {
    tracked.set(identityKey(root), root);
    previousKeys.add(identityKey(root));
  }

  return {
    addRoot(identity) {
      // Alive now: as if the previous scan had seen it, so one scan listed before its birth keeps it.
      tracked.set(identityKey(identity), identity);
      previousKeys.add(identityKey(identity));
    },
    observe(table) {
      const live = table.filter((stat) => isLive(stat) && stat.pid !== selfPid);
      // An id whose last member is gone may be reused by a stranger: forget it before adopting by it.
      const sessionsInUse = new Set(live.map((s) => s.sid));
      const groupsInUse = new Set(live.map((s) => s.pgid));
      for (const sid of ownedSessions.keys()) if (!sessionsInUse.has(sid)) ownedSessions.delete(sid);
      for (const pgid of ownedGroups.keys()) if (!groupsInUse.has(pgid)) ownedGroups.delete(pgid);
      const byPid = new Map(live.map((s) => [s.pid, s]));
      const liveKeys = new Set(live.map(identityKey));
      for (const key of markerChecked.keys()) if (!liveKeys.has(key)) markerChecked.delete(key);
      // A scan lists /proc before it reads each entry, so a process born after the listing is missing from
      // it though alive; one missing from two scans in a row is dead (pid + start time never come back).
      for (const key of tracked.keys()) if (!liveKeys.has(key) && !previousKeys.has(key)) tracked.delete(key);
      previousKeys = liveKeys;

      for (const stat of live) if (markerOf(stat) === true) remember(stat);
      for (const stat of collectDescendants(live, [...tracked.values()])) remember(stat);
      // Sessions and groups grow the set and the set grows them: repeat until nothing new is adopted.
      for (let changed = true; changed;) {
        changed = false;
        for (const stat of live) {
          if (!tracked.has(identityKey(stat))) {
            if (!isOurs(stat, byPid)) continue;
            remember(stat);
            if (!tracked.has(identityKey(stat))) continue;
            changed = true;
          }
          if (stat.sid === stat.pid && !ownedSessions.has(stat.sid)) { ownedSessions.set(stat.sid, identityKey(stat)); changed = true; }
          if (stat.pgid === stat.pid && !ownedGroups.has(stat.pgid)) { ownedGroups.set(stat.pgid, identityKey(stat)); changed = true; }
        }
        if (changed) for (const stat of collectDescendants(live, [...tracked.values()])) remember(stat);
      }
    },
    remaining(table) {
      const out = new Map<number, ProcStat>();
      const byPid = new Map(table.filter(isLive).map((s) => [s.pid, s]));
      for (const stat of table) {
        if (stat.pid === selfPid || !isLive(stat)) continue;
        if (isOurs(stat, byPid) || tracked.has(identityKey(stat))) out.set(stat.pid, stat);
      }
      return [...out.values()].sort((a, b) => a.pid - b.pid);
    },
    unverifiable(table) {
      if (marker === null) return [];
      const byPid = new Map(table.filter(isLive).map((s) => [s.pid, s]));
      // Only a session leader (a daemon: ssh-agent, gpg-agent) is suspect; a foreign non-dumpable program run
      // from a terminal (sudo) is not, so a busy machine does not make every run unprovable.
      return table.filter((stat) => stat.pid !== selfPid && isLive(stat) && stat.sid === stat.pid && !tracked.has(identityKey(stat)) && !isOurs(stat, byPid)
        && markerChecked.has(identityKey(stat)) && markerOf(stat) === null && marker.sameUser(stat.pid));
    },
    trackedCount: () => tracked.size,
    overflowed: () => overflow,
  };
}
