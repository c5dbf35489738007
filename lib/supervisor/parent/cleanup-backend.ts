/**
 * Which proof of cleanup this process's supervisors use: a cgroup v2 of each run's own (the kernel says when
 * nothing of the run is left), /proc tracking where no writable cgroup can be had, or the portable source
 * (`ps` tables and signals only) when chosen. Chosen once per
 * process: the answer depends on where this process sits in the cgroup tree, which does not change.
 */
import { detectOwnCgroup, sweepDeadCgroups, type CgroupDetection, type CgroupUnavailableReason } from '../../process/cgroup.ts';
import { describeCgroupSweep } from '../../process/cgroup-paths.ts';
import { selfOwner } from '../../process/proc-table.ts';
import type { JsonObject } from '../../util/json.ts';

export const CLEANUP_BACKEND_OPTIONS = ['auto', 'cgroup', 'process_scan', 'ps_scan'] as const;
export type CleanupBackendOption = (typeof CLEANUP_BACKEND_OPTIONS)[number];

export type CleanupBackend =
  | {
      readonly kind: 'cgroup';
      readonly base: string;
      readonly kill: 'cgroup.kill' | 'freeze';
      /** Chosen with `cgroup`, not `auto`: a run whose own cgroup cannot be made is refused, never tracked by /proc. */
      readonly forced: boolean;
    }
  | { readonly kind: 'process_scan'; readonly reason: CgroupUnavailableReason; readonly detail: string }
  | { readonly kind: 'ps_scan'; readonly reason: CgroupUnavailableReason; readonly detail: string };

/** The forced backend cannot be had (`cgroup` asked for where no writable cgroup exists). */
export class CleanupBackendUnavailable extends Error {
  readonly reason: CgroupUnavailableReason;
  constructor(reason: CgroupUnavailableReason, detail: string) {
    super(`the cgroup cleanup backend is not available here (${reason}): ${detail}`);
    this.name = 'CleanupBackendUnavailable';
    this.reason = reason;
  }
}

/** Pure: the backend an option and a detection give; throws when `cgroup` is forced and unavailable. */
export function chooseCleanupBackend(option: CleanupBackendOption, detect: () => CgroupDetection): CleanupBackend {
  if (option === 'process_scan')
    return { kind: 'process_scan', reason: 'forced_off', detail: 'the process_scan backend was chosen explicitly' };
  if (option === 'ps_scan') return { kind: 'ps_scan', reason: 'forced_off', detail: 'the ps_scan backend was chosen explicitly' };
  const found = detect();
  if (found.ok) return { kind: 'cgroup', base: found.base, kill: found.kill, forced: option === 'cgroup' };
  if (option === 'cgroup') throw new CleanupBackendUnavailable(found.reason, found.detail);
  return { kind: 'process_scan', reason: found.reason, detail: found.detail };
}

let detected: CgroupDetection | null = null;

/** This process's cgroup detection, done once. */
export function detectOnce(): CgroupDetection {
  if (detected === null) {
    const self = selfOwner();
    detected =
      self === null
        ? {
            ok: false,
            reason: 'no_cgroup2_mount',
            detail:
              'this process cannot be named from /proc (its stat, pid namespace or boot id unreadable, or /proc mounted for another pid namespace)',
          }
        : detectOwnCgroup(self);
  }
  return detected;
}

/**
 * The backend for `option` in this process. With a cgroup, the cgroups that supervisors of dead servers
 * left (a server and its supervisor both killed) are swept now: their owners are gone, nobody else ends them.
 */
export function cleanupBackendFor(option: CleanupBackendOption = 'auto', log?: (line: string) => void): CleanupBackend {
  const backend = chooseCleanupBackend(option, detectOnce);
  if (backend.kind === 'cgroup') sweepOnce(backend.base, log);
  return backend;
}

let swept = false;
function sweepOnce(base: string, log: ((line: string) => void) | undefined): void {
  if (swept) return;
  swept = true;
  // In the background: the processes it ends take a moment to die, and nothing waits for that.
  void sweepDeadCgroups(base).then((sweep) => {
    const line = describeCgroupSweep(sweep);
    if (line !== null) log?.(line);
  });
}

/**
 * The capabilities' account of how cleanup is proven, and for the fallback why. `fallbackRuns`: runs whose
 * own cgroup could not be made, tracked through /proc instead (`auto` only; null with the process_scan backend).
 */
export function describeCleanup(cleanup: CleanupBackend, fallbackRuns = 0): JsonObject {
  return cleanup.kind === 'cgroup'
    ? {
        backend: 'cgroup',
        cgroup: cleanup.base,
        kill: cleanup.kill,
        forced: cleanup.forced,
        fallback_reason: null,
        fallback_detail: null,
        fallback_runs: fallbackRuns,
      }
    : {
        backend: cleanup.kind,
        cgroup: null,
        kill: null,
        forced: false,
        fallback_reason: cleanup.reason,
        fallback_detail: cleanup.detail,
        fallback_runs: null,
      };
}
