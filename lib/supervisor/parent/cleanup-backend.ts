/**
 * Which proof of cleanup this process's supervisors use: a cgroup v2 of each run's own (the kernel says when
 * nothing of the run is left), /proc tracking where no writable cgroup can be had, or the portable source
 * (signals and the system `ps`), the only one on macOS. Chosen once per process: the answer depends on the
 * platform and on where this process sits in the cgroup tree, neither of which changes. On darwin nothing
 * here reads /proc or a cgroup file: detection is never attempted.
 */
import { detectOwnCgroup, sweepDeadCgroups, type CgroupDetection, type CgroupUnavailableReason } from '../../process/cgroup.ts';
import { describeCgroupSweep } from '../../process/cgroup-paths.ts';
import { procIsOwn, selfOwner } from '../../process/proc-table.ts';
import { supportedPlatform, type SupportedPlatform } from '../../process/platform.ts';
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

/**
 * The forced backend cannot be had: `cgroup` asked for where no writable cgroup exists, or `cgroup` or
 * `process_scan` on a platform without cgroups and /proc (reason `platform`).
 */
export class CleanupBackendUnavailable extends Error {
  readonly reason: CgroupUnavailableReason;
  readonly backend: CleanupBackendOption;
  constructor(reason: CgroupUnavailableReason, detail: string, backend: CleanupBackendOption = 'cgroup') {
    super(`the ${backend} cleanup backend is not available here (${reason}): ${detail}`);
    this.name = 'CleanupBackendUnavailable';
    this.reason = reason;
    this.backend = backend;
  }
}

const PROC_FOREIGN_DETAIL =
  "/proc lists another pid namespace's processes (a pid namespace without a /proc of its own, as unshare -p without --mount-proc makes): no process of a run could be told from anyone's; mount a /proc for the namespace";

/** On macOS the portable source is the only one: no cgroups, no /proc. */
const DARWIN_DETAIL = 'macOS has no cgroups and no /proc: cleanup is proven by signals and the system ps';

/**
 * Pure: the backend an option, a platform and a detection give; throws when a forced backend is unavailable.
 * `detect` is called only on Linux, and only when the option may take a cgroup.
 */
export function chooseCleanupBackend(
  option: CleanupBackendOption,
  detect: () => CgroupDetection,
  platform: SupportedPlatform = 'linux',
  procIsOwn: () => boolean = () => true,
): CleanupBackend {
  if (platform === 'darwin') {
    if (option === 'cgroup' || option === 'process_scan') throw new CleanupBackendUnavailable('platform', DARWIN_DETAIL, option);
    return { kind: 'ps_scan', reason: 'platform', detail: DARWIN_DETAIL };
  }
  // Every backend reads pids from /proc (procps' ps too): from another namespace's, each names someone else.
  if (!procIsOwn()) throw new CleanupBackendUnavailable('proc_foreign', PROC_FOREIGN_DETAIL, option);
  if (option === 'ps_scan') return { kind: 'ps_scan', reason: 'forced_off', detail: 'the ps_scan backend was chosen explicitly' };
  if (option === 'process_scan')
    return { kind: 'process_scan', reason: 'forced_off', detail: 'the process_scan backend was chosen explicitly' };
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
export function cleanupBackendFor(
  option: CleanupBackendOption = 'auto',
  platform: SupportedPlatform = supportedPlatform(),
  log?: (line: string) => void,
): CleanupBackend {
  const backend = chooseCleanupBackend(option, detectOnce, platform, procIsOwn);
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
 * The capabilities' and `check`'s account of how cleanup is proven, on which platform, and for a fallback why.
 * `fallbackRuns`: runs whose own cgroup could not be made, tracked through /proc instead (`auto` only; null
 * without the cgroup backend).
 */
export function describeCleanup(cleanup: CleanupBackend, platform: SupportedPlatform = supportedPlatform(), fallbackRuns = 0): JsonObject {
  return cleanup.kind === 'cgroup'
    ? {
        backend: 'cgroup',
        platform,
        cgroup: cleanup.base,
        kill: cleanup.kill,
        forced: cleanup.forced,
        fallback_reason: null,
        fallback_detail: null,
        fallback_runs: fallbackRuns,
      }
    : {
        backend: cleanup.kind,
        platform,
        cgroup: null,
        kill: null,
        forced: false,
        fallback_reason: cleanup.reason,
        fallback_detail: cleanup.detail,
        fallback_runs: null,
      };
}
