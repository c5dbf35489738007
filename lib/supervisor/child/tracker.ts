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

/** How the tracker recognises a marked process. */
export interface MarkerLookup {
  /** Processes started before this start time (clock ticks since boot) cannot belong to the run. */
  readonly notBefore: string;
  /** What /proc/<pid>/environ says of the marker (lib/process/proc-table.ts environMarker). */
  markerOf(pid: number): 'yes' | 'no' | 'empty' | 'unreadable';
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
  /**
   * Marker look-ups already done, by identity (null: unreadable), with the number of empty reads and the
   * observation of the last read; pruned to the live table on every scan.
   */
  const markerChecked = new Map<string, { readonly found: boolean | null; readonly pending: boolean; readonly empties: number; readonly at: number }>();
  let observation = 0;
  /** Pid to start time of strangers the previous snapshot settled (marker known), and identities seen dead. */
  let settledStrangers = new Map<number, string>();
  let seenDead = new Set<string>();
  let seenDeadPids = new Set<number>();
  let complete = false;
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
   * true, false, 'pending', or null when the environment could not be read (asked again on the next scan). A
   * non-empty environment without the marker is a final "no"; an empty one is final only once two scans agree:
   * a process of the run reads as empty while it exits, and carries the marker from birth. At most one read
   * per identity and snapshot.
   */
  const markerOf = (stat: ProcStat): boolean | null | 'pending' => {
    if (marker === null || stat.kthread === true || compareStart(stat.start, marker.notBefore) < 0) return false;
    const key = identityKey(stat);
    let state = markerChecked.get(key);
    if (state === undefined || (state.at < observation && (state.found === null || state.pending))) {
      const read = marker.markerOf(stat.pid);
      const empties = (state?.empties ?? 0) + (read === 'empty' ? 1 : 0);
      state = { found: read === 'yes' ? true : read === 'unreadable' ? null : false, pending: read === 'empty' && empties < 2, empties, at: observation };
      markerChecked.set(key, state);
    }
    return state.pending ? 'pending' : state.found;
  };
  /** Records the session and group a tracked process leads; true when one is new. */
  const lead = (stat: ProcStat): boolean => {
    let added = false;
    if (stat.sid === stat.pid && !ownedSessions.has(stat.sid)) { ownedSessions.set(stat.sid, identityKey(stat)); added = true; }
    if (stat.pgid === stat.pid && !ownedGroups.has(stat.pgid)) { ownedGroups.set(stat.pgid, identityKey(stat)); added = true; }
    return added;
  };
  /** Judges the snapshot just folded in (see lastScanComplete) and keeps what the next one is judged against. */
  const settle = (table: readonly ProcStat[], vanished: readonly number[], byPid: ReadonlyMap<number, ProcStat>): void => {
    let whole = vanished.every((pid) => settledStrangers.has(pid) || seenDeadPids.has(pid));
    const strangers = new Map<number, string>();
    const dead = new Set<string>();
    const deadPids = new Set<number>();
    for (const stat of table) {
      if (stat.pid === selfPid) continue;
      const key = identityKey(stat);
      if (!isLive(stat)) {
        dead.add(key);
        deadPids.add(stat.pid);
        if (!seenDead.has(key) && settledStrangers.get(stat.pid) !== stat.start) whole = false;
      } else if (!tracked.has(key) && !isOurs(stat, byPid)) {
        if (markerOf(stat) === 'pending') whole = false;
        else strangers.set(stat.pid, stat.start);
      }
    }
    settledStrangers = strangers;
    seenDead = dead;
    seenDeadPids = deadPids;
    complete = whole;
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
    observe(table, vanished = []) {
      observation++;
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
          changed = lead(stat) || changed;
        }
        if (changed) for (const stat of collectDescendants(live, [...tracked.values()])) remember(stat);
      }
      settle(table, vanished, byPid);
    },
    lastScanComplete: () => complete,
    observeDelta(fresh, view) {
      observation++;
      for (let changed = true; changed;) {
        changed = false;
        for (const stat of fresh) {
          if (!isLive(stat) || stat.pid === selfPid) continue;
          if (!tracked.has(identityKey(stat))) {
            const parent = view.get(stat.ppid);
            const byParent = parent !== undefined && isLive(parent) && tracked.has(identityKey(parent));
            if (!byParent && !isOurs(stat, view) && markerOf(stat) !== true) continue;
            remember(stat);
            if (!tracked.has(identityKey(stat))) continue;
            changed = true;
          }
          changed = lead(stat) || changed;
        }
      }
    },
    trackedIdentities: () => [...tracked.values()],
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
        && markerChecked.get(identityKey(stat))?.found === null && marker.sameUser(stat.pid));
    },
    trackedCount: () => tracked.size,
    overflowed: () => overflow,
  };
}
