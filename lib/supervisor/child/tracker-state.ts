/**
 * What the run tracker (tracker.ts) knows between snapshots, and its judgements of one process: is it the
 * run's by session or group, does it carry the marker, which ids does it lead.
 */
import type { ProcessIdentity } from '../protocol.ts';
import { compareStart, identityKey, identityOf, type ProcStat } from '../../process/proc-stat.ts';

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

interface MarkerCheck {
  /** null: unreadable. */
  readonly found: boolean | null;
  readonly pending: boolean;
  readonly empties: number;
  /** The observation of the last read. */
  readonly at: number;
}

/** What the tracker knows between snapshots. */
export interface TrackerState {
  readonly selfPid: number;
  readonly groupMode: boolean;
  readonly marker: MarkerLookup | null;
  readonly tracked: Map<string, ProcessIdentity>;
  /** Session and group ids created by tracked processes (the id is the creator's pid), with its identity key. */
  readonly ownedSessions: Map<number, string>;
  readonly ownedGroups: Map<number, string>;
  /** Marker look-ups already done, by identity; pruned to the live table on every scan. */
  readonly markerChecked: Map<string, MarkerCheck>;
  observation: number;
  /** Pid to start time of strangers the previous snapshot settled (marker known), and identities seen dead. */
  settledStrangers: Map<number, string>;
  seenDead: Set<string>;
  seenDeadPids: Set<number>;
  complete: boolean;
  /** Live identity keys of the previous scan: an identity absent from two scans in a row is dead. */
  previousKeys: Set<string>;
  overflow: boolean;
}

export function remember(t: TrackerState, stat: ProcStat): void {
  if (stat.pid === t.selfPid) return;
  const key = identityKey(stat);
  if (t.tracked.has(key)) return;
  if (t.tracked.size >= MAX_TRACKED_PROCESSES) {
    t.overflow = true;
    return;
  }
  t.tracked.set(key, identityOf(stat));
}

/** An owned id still names our session or group unless its number now belongs to another live process. */
function owns(owned: ReadonlyMap<number, string>, id: number, byPid: ReadonlyMap<number, ProcStat>): boolean {
  const creator = owned.get(id);
  if (creator === undefined) return false;
  const holder = byPid.get(id);
  return holder === undefined || identityKey(holder) === creator;
}

export function isOurs(t: TrackerState, stat: ProcStat, byPid: ReadonlyMap<number, ProcStat>): boolean {
  return (
    (t.groupMode && (stat.pgid === t.selfPid || stat.sid === t.selfPid)) ||
    owns(t.ownedSessions, stat.sid, byPid) ||
    owns(t.ownedGroups, stat.pgid, byPid)
  );
}

/**
 * true, false, 'pending', or null when the environment could not be read (asked again on the next scan). A
 * non-empty environment without the marker is a final "no"; an empty one is final only once two scans agree:
 * a process of the run reads as empty while it exits, and carries the marker from birth. At most one read
 * per identity and snapshot.
 */
export function markerOf(t: TrackerState, stat: ProcStat): boolean | null | 'pending' {
  const { marker } = t;
  if (marker === null || stat.kthread === true || compareStart(stat.start, marker.notBefore) < 0) return false;
  const key = identityKey(stat);
  let state = t.markerChecked.get(key);
  if (state === undefined || (state.at < t.observation && (state.found === null || state.pending))) {
    const read = marker.markerOf(stat.pid);
    const empties = (state?.empties ?? 0) + (read === 'empty' ? 1 : 0);
    state = {
      found: read === 'yes' ? true : read === 'unreadable' ? null : false,
      pending: read === 'empty' && empties < 2,
      empties,
      at: t.observation,
    };
    t.markerChecked.set(key, state);
  }
  return state.pending ? 'pending' : state.found;
}

/** Records the session and group a tracked process leads; true when one is new. */
export function lead(t: TrackerState, stat: ProcStat): boolean {
  let added = false;
  if (stat.sid === stat.pid && !t.ownedSessions.has(stat.sid)) {
    t.ownedSessions.set(stat.sid, identityKey(stat));
    added = true;
  }
  if (stat.pgid === stat.pid && !t.ownedGroups.has(stat.pgid)) {
    t.ownedGroups.set(stat.pgid, identityKey(stat));
    added = true;
  }
  return added;
}
