/**
 * The supervisor's state for its one run, and the small steps every phase shares: reporting, following the
 * run through /proc, adopting what it starts, and the run's placement (marker and cgroup).
 */
import type { ChildProcess } from 'node:child_process';
import { RUN_MARKER_ENV, STDERR_TAIL_MAX_BYTES, type ControlMessage, type ReportMessage, type RunPlacement } from '../protocol.ts';
import { identityOf, type ProcStat } from '../../process/proc-stat.ts';
import { environMarker, processUid, readProcStat } from '../../process/proc-table.ts';
import { createProcView, type ProcView } from '../../process/proc-view.ts';
import type { SupportedPlatform } from '../../process/platform.ts';
import { readPsTable } from '../../process/ps-source.ts';
import { pidExists } from '../../process/kill.ts';
import type { PsTableResult } from '../../process/ps-table.ts';
import { startPsTracking } from './ps-tracking.ts';
import { createPsRunTracker, type PsRunTracker } from './ps-tracker.ts';
import { openCgroupScope, type CgroupScope } from './cgroup-scope.ts';
import { openWritableFd } from './fds.ts';
import type { RunningProbe } from './probe.ts';
import { createSink, type Sink } from './sink.ts';
import { createByteTail, type ByteTail } from './stderr-tail.ts';
import { createRunTracker, type RunTracker } from './tracker.ts';
import { createTableClient, type TableClient } from './table-client.ts';
import { systemClock } from '../../util/clock.ts';

export type SpawnMessage = Extract<ControlMessage, { type: 'spawn' }>;
export type ProbeMessage = Extract<ControlMessage, { type: 'probe' }>;

/** The supervisor's own `ps` reads give up sooner than PS_TIMEOUT_MS, so a hung ps cannot outlast the ladder. */
export const PS_READ_TIMEOUT_MS = 3000;
/** Tracking interval before the run's own (from `spawn`) is known, i.e. while probes run. */
export const PROBE_TRACK_INTERVAL_MS = 100;
/** The kernel refused to let the supervisor into the run's cgroup for a spawn (it was removed meanwhile?). */
export const CGROUP_REFUSED_MESSAGE = "the run's cgroup refused the supervisor; nothing was started";
/** Between a probe and the run, scanning stops once this many scans in a row found nothing of the run. */
const IDLE_EMPTY_SCANS = 2;
/**
 * While the native runs, the ticks between full scans read only the run's processes and those born since
 * the last tick; a full scan (every process's stat) comes at most this far apart, and cleanup scans in full.
 */
const FULL_SCAN_EVERY_MS = 5000;

export interface SupervisorState {
  /** The server's platform decision, from the command line; null when none was given (nothing is started). */
  readonly platform: SupportedPlatform | null;
  readonly report: Sink;
  readonly tail: ByteTail;
  readonly selfPid: number;
  readonly selfStat: ProcStat | null;
  /** The supervisor leads its own process group. */
  readonly groupMode: boolean;
  readonly selfUid: number;
  marker: string | null;
  /** The cgroup base of the first command ('' until one came); the run's own cgroup once created. */
  cgroupBase: string | null | undefined;
  cgroupRequired: boolean;
  scope: CgroupScope | null;
  /** Why the run's cgroup could not be made under its base (the run then has none); null otherwise. */
  cgroupRefusal: string | null;
  spec: SpawnMessage | null;
  native: ChildProcess | null;
  tracker: RunTracker | null;
  /** The portable source: where tables come from (non-null means ps_scan), and the run's tracker over them. */
  /** The portable source's table, asked to wait at most waitMs for a ps shared with the server's other runs. */
  readonly readTable: ((waitMs: number) => Promise<PsTableResult>) | null;
  /** Reads one tracking table at once (the portable source while it tracks); null otherwise. */
  psTrackNow: (() => Promise<void>) | null;
  psTracker: PsRunTracker | null;
  /** The table being read for tracking, if any: the ladder waits for it so its own reads come in order. */
  psPending: Promise<void> | null;
  probe: RunningProbe | null;
  probesRun: number;
  /** Every process the supervisor started that has not been reaped yet. */
  readonly unreaped: Set<ChildProcess>;
  cleaning: boolean;
  /** Process tables on the portable source: asked of the server, else read by the supervisor's own ps. */
  readonly tables: TableClient;
  stopTracking: () => void;
  settleStderr: (graceMs: number) => Promise<void>;
}

export interface SupervisorOptions {
  /** The server's platform decision, from the command line; null when none was given (nothing is started). */
  readonly platform: SupportedPlatform | null;
  /**
   * Follow the run through `ps` tables (the portable source) read by this function instead of /proc; null: /proc
   * or the run's cgroup. The supervisor then opens no file of /proc for tracking or cleanup. Contract: each call
   * resolves (never rejects, within a bound) with a table from a `ps` started after the call was made, or with a
   * failure naming ps; the proof's "second table read after the first ended" rests on it.
   */
  readonly readTable: (() => Promise<PsTableResult>) | null;
}

/** The portable source's default tables: this supervisor runs `ps` itself, on its own PATH. */
export function ownPsTables(): Promise<PsTableResult> {
  return readPsTable({ path: process.env['PATH'] ?? '', timeoutMs: PS_READ_TIMEOUT_MS });
}

/** The state before any command came; reports go to fd 2 (fd 1 is never opened as a stream, see supervisor.ts). */
export function createSupervisorState(options: SupervisorOptions = { platform: 'linux', readTable: null }): SupervisorState {
  const { platform } = options;
  const report = createSink(openWritableFd(2));
  const tail = createByteTail(STDERR_TAIL_MAX_BYTES);
  const selfPid = process.pid;
  // /proc only on Linux and not under the portable source. Elsewhere the server started it detached (setsid):
  // it leads its own group.
  const selfStat = platform === 'linux' && options.readTable === null ? readProcStat(selfPid) : null;
  const tables = createTableClient({
    send: (line) => {
      report.write(line);
    },
    readOwnTable: options.readTable ?? ownPsTables,
    clock: systemClock,
  });
  const s: SupervisorState = {
    platform,
    report,
    tail,
    selfPid,
    selfStat,
    groupMode: selfStat === null ? true : selfStat.pgid === selfPid,
    selfUid: process.getuid?.() ?? -1,
    marker: null,
    cgroupBase: undefined,
    cgroupRequired: false,
    scope: null,
    cgroupRefusal: null,
    spec: null,
    native: null,
    tracker: null,
    // The portable source asks the server first (one ps per server, shared with the other runs); tracking
    // offers to wait its interval for that ps, cleanup does not wait.
    readTable: options.readTable === null ? null : (waitMs) => tables.readTable(s.cleaning ? 0 : waitMs),
    psTracker: null,
    psPending: null,
    psTrackNow: null,
    probe: null,
    probesRun: 0,
    unreaped: new Set<ChildProcess>(),
    cleaning: false,
    tables,
    stopTracking: () => {},
    settleStderr: () => Promise.resolve(),
  };
  return s;
}

export function reportLine(s: SupervisorState, message: ReportMessage): void {
  s.report.write(JSON.stringify(message) + '\n');
}

/** The run's tracker, made at its first use with the marker then known. */
function trackerOf(s: SupervisorState): RunTracker {
  const { marker, selfStat, selfUid } = s;
  s.tracker ??= createRunTracker({
    selfPid: s.selfPid,
    groupMode: s.groupMode,
    roots: [],
    marker:
      marker === null || selfStat === null
        ? null
        : {
            notBefore: selfStat.start,
            markerOf: (pid) => environMarker(pid, RUN_MARKER_ENV, marker),
            sameUser: (pid) => processUid(pid) === selfUid,
          },
  });
  return s.tracker;
}

/**
 * Follows the run through /proc every intervalMs (replacing any earlier interval) until cleanup or idle; under
 * the portable source through `ps` tables instead (ps-tracking.ts), and then returns null.
 */
export function track(s: SupervisorState, intervalMs: number): RunTracker | null {
  if (s.readTable !== null) {
    trackPs(s, s.readTable);
    return null;
  }
  s.stopTracking();
  const runTracker = trackerOf(s);
  // No scan right away: a process forked this instant has no descendants yet, and a scan costs CPU the
  // new process needs to start. The ladder scans first thing anyway.
  const tick: TickState = { emptyScans: 0, view: createProcView(), lastFull: -Infinity };
  const interval = setInterval(() => {
    trackTick(s, runTracker, tick);
  }, intervalMs);
  s.stopTracking = () => {
    clearInterval(interval);
  };
  return runTracker;
}

interface TickState {
  emptyScans: number;
  readonly view: ProcView;
  lastFull: number;
}

function trackTick(s: SupervisorState, runTracker: RunTracker, tick: TickState): void {
  if (s.cleaning) return;
  // A new process is seen by the tick after its birth either way; a full scan also reads strangers again.
  const partial =
    s.spec !== null && performance.now() - tick.lastFull < FULL_SCAN_EVERY_MS ? tick.view.delta(runTracker.trackedIdentities()) : null;
  if (partial !== null) {
    runTracker.observeDelta(partial.fresh, partial.view);
    return;
  }
  tick.lastFull = performance.now();
  const scan = tick.view.full();
  runTracker.observe(scan.table, scan.vanished);
  // Waiting between probes and the run (a warm spare may wait long): once nothing of the run is left,
  // proven as cleanup is (consecutive empty scans), there is nothing to follow until the next command.
  if (s.spec !== null || s.probe !== null || runTracker.remaining(scan.table).length > 0 || !runTracker.lastScanComplete())
    tick.emptyScans = 0;
  else if (++tick.emptyScans >= IDLE_EMPTY_SCANS) s.stopTracking();
}

/** The portable tracking (ps-tracking.ts), over the supervisor's state. */
function trackPs(s: SupervisorState, readTable: (waitMs: number) => Promise<PsTableResult>): void {
  s.stopTracking();
  const runTracker = (s.psTracker ??= createPsRunTracker(s.selfPid, pidExists));
  const tracking = startPsTracking(runTracker, readTable, {
    cleaning: () => s.cleaning,
    idle: () => s.spec === null && s.probe === null,
    reading: (pending) => {
      s.psPending = pending;
    },
  });
  s.stopTracking = tracking;
  s.psTrackNow = tracking.now;
}

/**
 * Adopts the marker and cgroup base of the first command; a later command with others is malformed. With a
 * base, the run's own cgroup is created now, before anything of the run starts. Where it cannot be (the base
 * went away, `cgroup.max.descendants` reached, a name clash), `cgroupRefusal` says why: a required cgroup
 * then refuses the run (see refusedPlacement), else the run is tracked through /proc and its report says so.
 */
export function takePlacement(s: SupervisorState, placement: RunPlacement): boolean {
  const { marker, cgroup, cgroupRequired } = placement;
  if (s.marker === null) {
    s.marker = marker;
    s.cgroupBase = cgroup;
    s.cgroupRequired = cgroupRequired;
    if (cgroup !== null) placeInCgroup(s, cgroup);
  }
  return s.marker === marker && s.cgroupBase === cgroup && s.cgroupRequired === cgroupRequired;
}

function placeInCgroup(s: SupervisorState, base: string): void {
  if (s.selfStat === null) {
    s.cgroupRefusal = `the supervisor cannot read its own /proc entry, so its run cgroup under ${base} cannot be named`;
    return;
  }
  const opened = openCgroupScope(base, identityOf(s.selfStat));
  if (opened.ok) s.scope = opened.scope;
  else s.cgroupRefusal = `the run's cgroup ${opened.dir} could not be created (${opened.code})`;
}

/** The refusal of a run whose required cgroup could not be made; null when the run may go on. */
export function refusedPlacement(s: SupervisorState): string | null {
  return s.cgroupRequired && s.scope === null ? (s.cgroupRefusal ?? 'the run has no cgroup') : null;
}

/** Spawns a process of the run: born inside the run's cgroup when there is one. */
export function spawnRunProcess<T>(s: SupervisorState, spawn: () => T): T | null {
  return s.scope === null ? spawn() : s.scope.spawnInside(spawn);
}

/** Counts a started process as unreaped until its exit, and as a root of the run when it is tracked. */
export function adopt(s: SupervisorState, child: ChildProcess, runTracker: RunTracker | null): void {
  s.unreaped.add(child);
  child.once('exit', () => {
    s.unreaped.delete(child);
  });
  if (s.psTracker !== null && child.pid !== undefined) {
    const { psTracker } = s;
    const { pid } = child;
    psTracker.addRoot(pid);
    // Reaped, its pid may go to the supervisor's next `ps`: only the identity a table showed stays the run's.
    child.once('exit', () => {
      psTracker.dropRoot(pid);
    });
  }
  if (runTracker === null) return;
  // The child is unreaped until its exit event, so its /proc entry (and start time) is stable here.
  const stat = child.pid === undefined || s.platform !== 'linux' ? null : readProcStat(child.pid);
  if (stat !== null) runTracker.addRoot(identityOf(stat));
}
