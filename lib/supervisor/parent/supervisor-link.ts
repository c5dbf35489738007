/**
 * The adapter's link to one supervisor process (run-supervised.ts): what its reports said, its control pipe,
 * and its end. The link settles as soon as the cleanup report is in and both pipes ended; when the supervisor
 * dies without that report, the fallback ends the run's cgroup or kills what is left by marker.
 */
import type { ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { assertNever } from '../../util/assert-never.ts';
import { runCgroupDir } from '../../process/cgroup.ts';
import {
  SPAWN_ERROR_NO_CGROUP,
  SPAWN_ERROR_NO_CODE,
  type ControlMessage,
  type ProbeOutcome,
  type ProcessIdentity,
  type ReportMessage,
  type TableAnswerMessage,
  type TableRequest,
  type VersionProof,
} from '../protocol.ts';
import { formatTableAnswer } from '../table-wire.ts';
import type { TableAsker, TableSource } from './table-source.ts';
import { endReportedNative, killLeftovers } from './fallback-kill.ts';
import type { SupportedPlatform } from '../../process/platform.ts';
import { endLostRunCgroup } from './lost-cgroup.ts';
import { readReports, type ReportReader } from './report-reader.ts';
import { readInSlices, type SlicedReader } from './sliced-reader.ts';

/** After the supervisor exits, its pipes get this long to deliver their last bytes. */
export const SUPERVISOR_PIPE_GRACE_MS = 2000;
/** Native stdout is ingested at most this much per event-loop turn, so requests never queue behind floods. */
export const STDOUT_SLICE_BYTES = 16 * 1024;

export interface SupervisedHooks {
  onStdout(chunk: Buffer): void;
  onReport?(message: ReportMessage): void;
}

export type CleanupReport = Extract<ReportMessage, { type: 'cleanup' }>;

export interface SupervisedOutcome {
  readonly spawned: ProcessIdentity | null;
  /** What the version check bound the native to (the `spawned` report's); null when none was reported. */
  readonly versionProof: VersionProof | null;
  readonly spawnError: { readonly code: string; readonly message: string } | null;
  readonly exit: { readonly code: number | null; readonly signal: string | null } | null;
  /** null: no explicit report arrived, so cleanup is unconfirmed. */
  readonly cleanup: CleanupReport | null;
  /** null when the run settled on the supervisor's final report, before its exit was observed. */
  readonly supervisorExit: { readonly code: number | null; readonly signal: string | null } | null;
  readonly stderrTail: string;
  readonly stderrBytes: number;
  /** Processes the adapter itself SIGKILLed because the supervisor left no cleanup report. */
  readonly fallbackKilled: number;
  /**
   * Processes of the run the darwin fallback saw but left alone (not proven the run's without the supervisor's
   * record; only the reported native is ended there); 0 on Linux.
   */
  readonly fallbackLeft: number;
  /** Why the darwin fallback could not look (its ps failed), else null. */
  readonly fallbackError: string | null;
  /**
   * 'cgroup' when the supervisor left no report but the adapter ended the run's cgroup and the kernel showed
   * it empty (then removed): cleanup is proven all the same. null otherwise.
   */
  readonly fallbackProof: 'cgroup' | null;
  /**
   * What the adapter's fallback looked with when the supervisor left no report: one ps table off Linux
   * (`ps_scan`, never /proc), /proc by marker on Linux (`process_scan`). The proof a lost run names.
   */
  readonly fallbackSource: 'process_scan' | 'ps_scan';
  /** What the supervisor wrote on its report pipe that was no report (an uncaught exception's text), or null. */
  readonly crashText: string | null;
}

export type SupervisorChild = ChildProcessByStdio<Writable, Readable, Readable>;

/** Fixed when the supervisor is spawned. */
export interface LinkPlacement {
  readonly marker: string;
  /** The cgroup base its run's cgroup is made under; null when cleanup is proven by /proc scans. */
  readonly cgroup: string | null;
  /** The cgroup backend was forced: the supervisor refuses a run whose cgroup cannot be made. */
  readonly cgroupRequired: boolean;
  /** Told when a run that was to have a cgroup reports its cleanup proven by /proc scans. */
  readonly onFallback?: () => void;
  /** Unreaped until its exit event, so this identity is stable for the fallback. */
  readonly supervisorId: ProcessIdentity | null;
  /** How long the fallback gives a lost run's cgroup to empty after SIGKILL. */
  readonly fallbackGraceMs: number;
  /** The server's platform decision: off Linux the fallback reads one ps table, never /proc. */
  readonly platform: SupportedPlatform;
  /** The server's one table source, which answers the supervisor's table requests (ps_scan). */
  readonly tables: TableSource;
}

export interface SupervisorLink extends LinkPlacement {
  readonly child: SupervisorChild;
  hooks: SupervisedHooks | null;
  phase: 'idle' | 'started' | 'disposed';
  // What the reports said.
  spawned: ProcessIdentity | null;
  versionProof: VersionProof | null;
  spawnError: SupervisedOutcome['spawnError'];
  exit: SupervisedOutcome['exit'];
  cleanup: CleanupReport | null;
  // The control pipe.
  terminated: boolean;
  controlOpen: boolean;
  nextProbeId: number;
  readonly probes: Map<number, (outcome: ProbeOutcome) => void>;
  readonly probeFiles: Map<number, string>;
  /** File → identity at its latest answered probe. */
  readonly probedFiles: Map<string, string | null>;
  /** File → the image that gave its latest answered probe. */
  readonly probedImages: Map<string, string | null>;
  // The pipes and the end.
  readonly stdout: SlicedReader;
  readonly reports: ReportReader;
  /** This supervisor as the table source sees it: answers go to its control pipe. */
  readonly tableAsker: TableAsker;
  supervisorExit: SupervisedOutcome['supervisorExit'];
  pipeTimer: NodeJS.Timeout | null;
  settled: boolean;
  fallbackKilled: number;
  fallbackLeft: number;
  fallbackError: string | null;
  fallbackProof: 'cgroup' | null;
  /** The fallback that must finish before the run settles: the lost run's cgroup, or the darwin ps look. */
  lostCgroup: Promise<void> | null;
  readonly done: Promise<SupervisedOutcome>;
  readonly exited: Promise<void>;
  readonly resolveDone: (outcome: SupervisedOutcome) => void;
  readonly resolveExited: () => void;
}

/** Starts reading a freshly spawned supervisor's pipes and watching its end. */
export function openLink(child: SupervisorChild, placement: LinkPlacement): SupervisorLink {
  let resolveExited = (): void => {};
  const exited = new Promise<void>((resolve) => {
    resolveExited = resolve;
  });
  let resolveDone = (_outcome: SupervisedOutcome): void => {};
  const done = new Promise<SupervisedOutcome>((resolve) => {
    resolveDone = resolve;
  });
  const link: SupervisorLink = {
    ...placement,
    child,
    hooks: null,
    phase: 'idle',
    spawned: null,
    versionProof: null,
    spawnError: null,
    exit: null,
    cleanup: null,
    terminated: false,
    controlOpen: true,
    nextProbeId: 0,
    probes: new Map(),
    probeFiles: new Map(),
    probedFiles: new Map(),
    probedImages: new Map(),
    // Native stdout (nothing comes before `start`; whatever might come then is drained, not kept).
    stdout: readInSlices(
      child.stdout,
      STDOUT_SLICE_BYTES,
      (slice) => {
        link.hooks?.onStdout(slice);
      },
      () => {
        settleEarly(link);
      },
    ),
    reports: readReports(child.stderr, {
      onMessage: (message) => {
        onReport(link, message);
      },
      onTableRequest: (request) => onTableRequest(link, request),
      onEnd: () => {
        settleEarly(link);
      },
    }),
    tableAsker: {
      answer: (id, answer, flushed) => {
        writeControlLine(link, formatTableAnswer(id, link.tables.answerFor(answer, child.pid)), flushed);
      },
    },
    supervisorExit: null,
    pipeTimer: null,
    settled: false,
    fallbackKilled: 0,
    fallbackLeft: 0,
    fallbackError: null,
    fallbackProof: null,
    lostCgroup: null,
    done,
    exited,
    resolveDone,
    resolveExited,
  };
  child.stdin.on('error', () => {
    link.controlOpen = false;
  });
  child.once('exit', (code, signal) => {
    onSupervisorExit(link, code, signal);
  });
  child.once('close', () => {
    onSupervisorClose(link);
  });
  child.once('error', (error: NodeJS.ErrnoException) => {
    onSpawnFailure(link, error);
  });
  return link;
}

/** Sends one command; table answers have their own wire form (writeControlLine). */
export function sendControl(link: SupervisorLink, message: Exclude<ControlMessage, TableAnswerMessage>): void {
  writeControlLine(link, JSON.stringify(message) + '\n', () => {});
}

/** `written` runs once the line left for the pipe, or at once when the pipe is closed. */
function writeControlLine(link: SupervisorLink, line: string, written: () => void): void {
  if (!link.controlOpen) {
    written();
    return;
  }
  link.child.stdin.write(line, () => {
    written();
  });
}

/** A supervisor asks for a table: the server's source holds it, or it is refused at once (over its bound). */
function onTableRequest(link: SupervisorLink, { id, waitMs }: TableRequest): boolean {
  if (!link.controlOpen || link.settled) return false;
  if (link.tables.request(link.tableAsker, id, waitMs)) return true;
  writeControlLine(link, formatTableAnswer(id, { kind: 'refused', reason: 'too_many_pending' }), () => {});
  return false;
}

function endProbes(link: SupervisorLink, outcome: ProbeOutcome): void {
  for (const resolve of link.probes.values()) resolve(outcome);
  link.probes.clear();
}

function onReport(link: SupervisorLink, message: ReportMessage): void {
  switch (message.type) {
    case 'probe_result': {
      const resolve = link.probes.get(message.id);
      link.probes.delete(message.id);
      const file = link.probeFiles.get(message.id);
      link.probeFiles.delete(message.id);
      if (file !== undefined && resolve !== undefined) {
        link.probedFiles.set(file, message.fileId);
        link.probedImages.set(file, message.imageId);
      }
      resolve?.(message.outcome);
      return;
    }
    case 'spawned':
      link.spawned = { pid: message.pid, start: message.start };
      link.versionProof = message.version_proof;
      break;
    case 'spawn_error':
      link.spawnError = { code: message.code, message: message.message };
      break;
    case 'exit':
      link.exit = { code: message.code, signal: message.signal };
      break;
    case 'cleanup':
      link.cleanup = message;
      // Only a run whose cgroup could not be made and that then ran tracked through /proc fell back; a refused run
      // started nothing, and a supervisor closed before any command had no cgroup to want.
      if (fellBack(link, message)) link.onFallback?.();
      endProbes(link, { kind: 'cancelled' });
      break;
    default:
      assertNever(message);
  }
  link.hooks?.onReport?.(message);
}

function fellBack(link: SupervisorLink, cleanup: CleanupReport): boolean {
  return (
    link.cgroup !== null &&
    cleanup.proof === 'process_scan' &&
    link.spawnError?.code !== SPAWN_ERROR_NO_CGROUP &&
    cleanup.steps.some((step) => step.startsWith('cgroup_unavailable:'))
  );
}

function settleEarly(link: SupervisorLink): void {
  if (link.cleanup !== null && link.stdout.ended() && link.reports.ended()) settle(link);
}

function settle(link: SupervisorLink): void {
  if (link.settled) return;
  link.settled = true;
  link.tables.forget(link.tableAsker);
  link.reports.end();
  endProbes(link, { kind: 'spawn_error', message: 'the supervisor ended before the probe finished' });
  const { spawned, versionProof, spawnError, exit, supervisorExit, fallbackKilled, fallbackLeft, fallbackError, fallbackProof } = link;
  const report: CleanupReport | null = link.cleanup;
  link.resolveDone({
    spawned,
    versionProof,
    spawnError,
    exit,
    cleanup: report,
    supervisorExit,
    fallbackKilled,
    fallbackLeft,
    fallbackError,
    fallbackProof,
    fallbackSource: link.platform === 'linux' ? 'process_scan' : 'ps_scan',
    crashText: link.reports.unparsedTail() === '' ? null : link.reports.unparsedTail(),
    stderrTail: report?.stderr_tail ?? '',
    stderrBytes: report?.stderr_bytes ?? 0,
  });
}

function onSupervisorExit(link: SupervisorLink, code: number | null, signal: NodeJS.Signals | null): void {
  link.supervisorExit = { code, signal };
  link.controlOpen = false;
  link.tables.forget(link.tableAsker);
  link.child.stdin.destroy();
  // The supervisor exits by itself (code 0) only after its report was written; any other end means it
  // died mid-run. Act at once: every moment waited lets a dying native orphan its children.
  if ((code !== 0 || signal !== null) && link.cleanup === null) startFallback(link);
  // A process that escaped could still hold our read ends' peers open; do not wait on it forever.
  const { child } = link;
  link.pipeTimer = setTimeout(() => {
    child.stdout.destroy();
    child.stderr.destroy();
  }, SUPERVISOR_PIPE_GRACE_MS);
  link.pipeTimer.unref();
}

/**
 * The supervisor died without its report: end the run's cgroup if it had made one (it holds every process
 * of the run), else kill what is left by marker.
 */
function startFallback(link: SupervisorLink): void {
  const { cgroup, supervisorId, marker } = link;
  if (link.platform !== 'linux') {
    // No /proc: one ps table, the reported native ended, the rest reported (fallback-kill.ts).
    link.lostCgroup = endReportedNative(link.child.pid ?? null, link.spawned, process.env['PATH'] ?? '').then((ended) => {
      link.fallbackKilled += ended.killed;
      link.fallbackLeft += ended.left;
      link.fallbackError = ended.error;
    });
    return;
  }
  const dir = cgroup === null || supervisorId === null ? null : runCgroupDir(cgroup, supervisorId);
  link.lostCgroup =
    dir === null
      ? null
      : endLostRunCgroup(dir, link.fallbackGraceMs).then((lost) => {
          if (lost.proven) link.fallbackProof = 'cgroup';
          if (!lost.existed) link.fallbackKilled += killLeftovers(supervisorId, link.spawned, marker);
        });
  if (link.lostCgroup === null) link.fallbackKilled += killLeftovers(supervisorId, link.spawned, marker);
}

function onSupervisorClose(link: SupervisorLink): void {
  if (link.pipeTimer) clearTimeout(link.pipeTimer);
  link.stdout.flush();
  const lost = link.lostCgroup;
  if (lost !== null) {
    void lost.then(() => {
      settle(link);
      link.resolveExited();
    });
    return;
  }
  // A second sweep: whatever was re-parented or started while the first one ran.
  if (!link.settled && link.cleanup === null) link.fallbackKilled += killLeftovers(link.supervisorId, link.spawned, link.marker);
  settle(link);
  link.resolveExited();
}

function onSpawnFailure(link: SupervisorLink, error: NodeJS.ErrnoException): void {
  if (link.child.pid !== undefined) return;
  link.controlOpen = false;
  link.spawnError = { code: error.code ?? SPAWN_ERROR_NO_CODE, message: error.message };
  settle(link);
  link.resolveExited();
}
