/**
 * The private protocol between the adapter and one supervisor child.
 *
 * Supervisor stdio (only fds 0-2, so nothing else can leak into the native process):
 *   fd 0  control, adapter -> supervisor: JSON lines (any number of `probe`s, one at a time, such as the
 *         version check; then at most one `spawn`; then optional `terminate`). EOF means the adapter is done
 *         or gone: the supervisor ends whatever of the run lives and exits.
 *   fd 1  data, native -> adapter: the supervisor hands its own fd 1 to the native process as its stdout, so
 *         the native bytes reach the adapter unchanged with no relay hop (the supervisor never writes on it).
 *   fd 2  report, supervisor -> adapter: JSON lines (`probe_result` per probe, `spawned`, `exit`, then exactly
 *         one final `cleanup`).
 * Beside the run's lines, a supervisor on the portable source (ps_scan) asks the server for process tables:
 * `table_request` on fd 2, answered by one `table` line on fd 0 (lib/supervisor/table-wire.ts), so one `ps`
 * serves every supervisor of a server (lib/supervisor/parent/table-source.ts).
 * Every process the supervisor starts (probes and the native) carries RUN_MARKER_ENV=<marker> in its
 * environment, so whatever it leaves can be found in /proc however it re-parents or re-groups itself.
 * Native stderr never reaches the adapter as a stream: the supervisor keeps a bounded tail and puts it in
 * the cleanup report.
 */
import type { NativeQuery } from '../native/version.ts';
import type { ProcessIdentity } from '../process/proc-stat.ts';
import { SUPPORTED_PLATFORMS, type SupportedPlatform } from '../process/platform.ts';

/**
 * The server decides its platform once (lib/process/platform.ts) and tells each supervisor on its command
 * line, as the last argument `--platform=<linux|darwin>`; a supervisor never reads process.platform.
 */
export const PLATFORM_ARG_PREFIX = '--platform=';

export function platformArg(platform: SupportedPlatform): string {
  return `${PLATFORM_ARG_PREFIX}${platform}`;
}

/** The platform a supervisor's arguments name (exactly one `--platform=` of a known platform), else null. */
export function parsePlatformArg(args: readonly string[]): SupportedPlatform | null {
  const given = args.filter((arg) => arg.startsWith(PLATFORM_ARG_PREFIX)).map((arg) => arg.slice(PLATFORM_ARG_PREFIX.length));
  return given.length === 1 ? (SUPPORTED_PLATFORMS.find((p) => p === given[0]) ?? null) : null;
}
import type { PsOutput, PsRow } from '../process/ps-table.ts';

/** Bound on the run's report lines on fd 2 (all but the probe results, together). */
export const REPORT_MAX_BYTES = 64 * 1024;
/** A probe's stdout kept by the supervisor; more is drained and reported as overflow. */
export const PROBE_STDOUT_MAX_BYTES = 256 * 1024;
export const PROBE_STDERR_MAX_BYTES = 2 * 1024;
/** One probe_result line: base64 of the bounded outputs plus the envelope. */
export const PROBE_LINE_MAX_BYTES = 4 * Math.ceil((PROBE_STDOUT_MAX_BYTES + PROBE_STDERR_MAX_BYTES) / 3) + 1024;
/** Probes one supervisor runs at most; later ones are refused. */
export const MAX_PROBES = 4;
/** Everything the supervisor may write on fd 2; the adapter drains and ignores bytes beyond it. */
export const REPORT_PIPE_MAX_BYTES = REPORT_MAX_BYTES + MAX_PROBES * PROBE_LINE_MAX_BYTES;
/** Ladder timings when a run ends before `spawn` (only probes ran): nothing there needs a soft stop. */
export const PROBE_ONLY_LADDER = { interruptGraceMs: 0, termGraceMs: 500, killGraceMs: 1000 } as const;
/** The environment variable that marks every process of one run (value: a per-run random marker). */
export const RUN_MARKER_ENV = 'CLAUDE_RUN_MCP_RUN_MARKER';
/** A marker is 32 lower-case hex digits (128 random bits). */
export const RUN_MARKER_PATTERN = /^[0-9a-f]{32}$/;
/** The `code` of a spawn error when Node gives no errno code (either side, the supervisor or the native). */
export const SPAWN_ERROR_NO_CODE = 'SPAWN_FAILED';
/** The `code` of the spawn error when the file to run is not the one its probe vouched for (see expectFileId). */
export const SPAWN_ERROR_FILE_CHANGED = 'NATIVE_CHANGED';
/** The `code` of the spawn error when a required run cgroup could not be made (nothing was started). */
export const SPAWN_ERROR_NO_CGROUP = 'CGROUP_UNAVAILABLE';
/** The `code` of the spawn error of a supervisor started without its platform argument (PLATFORM_ARG_PREFIX). */
export const SPAWN_ERROR_NO_PLATFORM = 'NO_PLATFORM';
export const STDERR_TAIL_MAX_BYTES = 16 * 1024;
export const CONTROL_LINE_MAX_BYTES = 32 * 1024 * 1024;

/**
 * The most ps output one table answer carries: the portable source's own bound (PS_MAX_OUTPUT_BYTES, held
 * equal by a spec), so an answer can carry any table the supervisor's own ps could have read. More is
 * answered as the failure `ps_output_too_large`, never cut.
 */
export const TABLE_OUTPUT_MAX_BYTES = 8 * 1024 * 1024;
/** A `table` control line: the output as base64 plus the envelope. */
export const TABLE_ANSWER_LINE_MAX_BYTES = 4 * Math.ceil(TABLE_OUTPUT_MAX_BYTES / 3) + 1024;
/** A `table_request` report line; a longer one is no request. */
export const TABLE_REQUEST_LINE_MAX_BYTES = 128;
/** The longest a request may offer to wait for a ps that other supervisors' requests share. */
export const TABLE_REQUEST_WAIT_MAX_MS = 10_000;
/**
 * Table requests of one supervisor the server holds at once (waiting for a ps, or answered but not yet
 * flushed into its pipe); one more is answered `refused` at once. A supervisor never asks with this many
 * unanswered: it runs ps itself instead.
 */
export const TABLE_REQUESTS_PENDING_MAX = 2;
/** A failure's message in a table answer (the source quotes at most PS_STDERR_QUOTE_CHARS of ps's stderr). */
export const TABLE_FAILURE_MESSAGE_MAX_CHARS = 1024;

/**
 * Why the adapter ends a run early; the one list of them (classification names the same reasons). An adapter
 * that is gone sends nothing: the control pipe's EOF says so.
 */
export const TERMINATE_REASONS = ['cancel', 'timeout', 'idle_timeout', 'frame_too_large', 'final_too_large'] as const;
export type TerminateReason = (typeof TERMINATE_REASONS)[number];

/** A command the supervisor starts: the same shape for a probe and for the native run. */
export interface CommandSpec {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Where the run's processes are born: under `cgroup` (an absolute cgroup v2 directory the supervisor lives
 * in), the supervisor creates the run's own cgroup and proves cleanup by it; null: by /proc scans.
 * The first command decides for the whole run; a later command that differs is malformed.
 */
export interface RunPlacement {
  readonly marker: string;
  readonly cgroup: string | null;
  /**
   * The cgroup backend was forced: where the run's own cgroup cannot be made, the supervisor starts nothing
   * and reports SPAWN_ERROR_NO_CGROUP (under `auto` it tracks the run through /proc instead).
   */
  readonly cgroupRequired: boolean;
}

/**
 * What a run's version check binds it to: "image" (machine code exec'd through the pinned file, its image
 * read right after spawn the image that answered the check), "file" (the file's identity, by fstat, the same
 * before the probe, after it, before the spawn and right after it: an interpreter opens a script again by
 * path, so a script gets this at most), "path" (nothing bound: the path ran whatever it named then).
 */
export const VERSION_PROOFS = ['image', 'file', 'path'] as const;
export type VersionProof = (typeof VERSION_PROOFS)[number];

/** What a cleanup report's confirmation rests on: the kernel's cgroup accounting, /proc scans, or `ps` tables. */
export const CLEANUP_PROOFS = ['cgroup', 'process_scan', 'ps_scan'] as const;
export type CleanupProof = (typeof CLEANUP_PROOFS)[number];

export type ControlMessage =
  | (CommandSpec &
      RunPlacement & {
        /** Runs one short command (e.g. `--version`) in the run's group and reports its bounded output. */
        readonly type: 'probe';
        readonly id: number;
        /** The supervisor SIGKILLs the probe after this long and reports `timeout`. */
        readonly timeoutMs: number;
        readonly maxStdoutBytes: number;
      })
  | (CommandSpec &
      RunPlacement & {
        readonly type: 'spawn';
        /** Written to native stdin first; null means stdin is /dev/null. */
        readonly stdin: string | null;
        /** Native stdin stays open after `stdin` for `input` lines until `input_end` (stream-json input). */
        readonly keepStdinOpen: boolean;
        readonly interruptGraceMs: number;
        readonly termGraceMs: number;
        readonly killGraceMs: number;
        readonly trackIntervalMs: number;
        /**
         * The identity (lib/supervisor/file-id.ts) the file had when a probe vouched for it (its version was
         * checked): the supervisor refuses to start a file that is no longer that one. null: not bound.
         */
        readonly expectFileId: string | null;
        /**
         * The image the probe answered as (its `image_id`): when the file is machine code the native's image
         * right after spawn must be expectFileId or this one (a launcher that exec'd it already). null: none.
         */
        readonly expectImageId: string | null;
      })
  | { readonly type: 'terminate'; readonly reason: TerminateReason }
  | NativeInputMessage
  | TableAnswerMessage;

/**
 * Bytes for the native's open stdin (a spawn with keepStdinOpen), written in order; `input_end` closes it.
 * Ignored once the native's stdin is gone: a line the native can no longer read is never an error of the run.
 */
export type NativeInputMessage = { readonly type: 'input'; readonly data: string } | { readonly type: 'input_end' };

/** A supervisor asks the server for one process table; a request is answered by a ps started after it arrived. */
export interface TableRequest {
  readonly type: 'table_request';
  readonly id: number;
  /**
   * How long the asker can wait for its ps (0: now, after a short gather): a run being tracked offers its
   * tracking interval, so one ps serves every run whatever their phases; the ladder asks with 0.
   */
  readonly waitMs: number;
}

/**
 * The server's answer to one table request: the rows of the table this supervisor can need, parsed by the
 * server (parent/table-view.ts); ps's raw output (the supervisor parses it as it would its own); why ps gave none
 * (it names ps); or a refusal (over TABLE_REQUESTS_PENDING_MAX: the supervisor runs ps itself).
 */
export type TableAnswer =
  PsOutput | { readonly kind: 'rows'; readonly rows: readonly PsRow[] } | { readonly kind: 'refused'; readonly reason: 'too_many_pending' };

export interface TableAnswerMessage {
  readonly type: 'table';
  readonly id: number;
  readonly answer: TableAnswer;
}

/** The wire carries identities as the process layer defines them. */
export type { ProcessIdentity };

/** A probe's outcome is what the version check reads, so the native layer defines it. */
export type ProbeOutcome = NativeQuery;

/** A probe outcome as the supervisor holds it: the outputs as raw bytes (they travel base64-encoded). */
export type RawProbeOutcome =
  | Exclude<ProbeOutcome, { kind: 'exited' }>
  | (Omit<Extract<ProbeOutcome, { kind: 'exited' }>, 'stdout' | 'stderr'> & { readonly stdout: Buffer; readonly stderr: Buffer });

export type ReportMessage =
  | {
      readonly type: 'probe_result';
      readonly id: number;
      readonly outcome: ProbeOutcome;
      /** The probed file's identity, the same before the probe started and after it ended; else null. */
      readonly fileId: string | null;
      /**
       * The image (/proc/<pid>/exe) that wrote the answer, alone (the probe had started no process), when
       * fileId is bound; else null (unreadable, or the answer may be another process's).
       */
      readonly imageId: string | null;
    }
  | {
      readonly type: 'spawned';
      readonly pid: number;
      readonly start: string;
      readonly pgid: number;
      /** What the run's version check binds it to (absent from an older supervisor: path). */
      readonly version_proof: VersionProof;
    }
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
      /** What `confirmed` rests on (absent from an older supervisor: process_scan). */
      readonly proof: CleanupProof;
      readonly stderr_tail: string;
      readonly stderr_bytes: number;
    };
