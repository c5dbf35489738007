/**
 * The private protocol between the adapter and one supervisor child.
 *
 * Supervisor stdio (only fds 0-2, so nothing else can leak into the native process):
 *   fd 0  control, adapter -> supervisor: JSON lines (first `spawn`, then optional `terminate`). EOF means
 *         the adapter is gone: the supervisor terminates the run and exits.
 *   fd 1  data, native -> adapter: the supervisor hands its own fd 1 to the native process as its stdout, so
 *         the native bytes reach the adapter unchanged with no relay hop (the supervisor never writes on it).
 *   fd 2  report, supervisor -> adapter: JSON lines (`spawned`, `exit`, then exactly one final `cleanup`).
 * Native stderr never reaches the adapter as a stream: the supervisor keeps a bounded tail and puts it in
 * the cleanup report.
 */

/** Bound on everything the supervisor writes on fd 2 (all report lines together). */
export const REPORT_MAX_BYTES = 64 * 1024;
export const STDERR_TAIL_MAX_BYTES = 16 * 1024;
export const CONTROL_LINE_MAX_BYTES = 32 * 1024 * 1024;

export type TerminateReason = 'cancel' | 'timeout' | 'idle_timeout' | 'frame_too_large' | 'final_too_large' | 'adapter_gone';

export type ControlMessage =
  | {
      readonly type: 'spawn';
      readonly file: string;
      readonly args: readonly string[];
      readonly cwd: string;
      readonly env: Readonly<Record<string, string>>;
      /** Written to native stdin then closed; null means stdin is /dev/null. */
      readonly stdin: string | null;
      readonly interruptGraceMs: number;
      readonly termGraceMs: number;
      readonly killGraceMs: number;
      readonly trackIntervalMs: number;
    }
  | { readonly type: 'terminate'; readonly reason: TerminateReason };

export interface ProcessIdentity {
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot): pid + start never repeats. */
  readonly start: string;
}

export type ReportMessage =
  | { readonly type: 'spawned'; readonly pid: number; readonly start: string; readonly pgid: number }
  | { readonly type: 'spawn_error'; readonly code: string; readonly message: string }
  | { readonly type: 'exit'; readonly code: number | null; readonly signal: string | null }
  | {
      readonly type: 'cleanup';
      /** True only when nothing of the run but the supervisor itself is proven to remain. */
      readonly confirmed: boolean;
      /** Processes of the run still alive after the ladder (possibly cut short to fit the report). */
      readonly survivors: readonly ProcessIdentity[];
      /** Survivors left out of `survivors` so the line fits REPORT_MAX_BYTES. */
      readonly survivors_omitted: number;
      /** The ladder steps actually taken, in order, e.g. ["SIGINT:native","SIGTERM:group","SIGKILL:3"]. */
      readonly steps: readonly string[];
      /** Why cleanup could not be completed or verified (e.g. a signal failed with EPERM); null otherwise. */
      readonly error: string | null;
      readonly stderr_tail: string;
      readonly stderr_bytes: number;
    };
