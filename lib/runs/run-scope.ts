/**
 * What the steps of one run share: the injected edges, the prepared invocation, the caller's hooks, and the
 * run's per-run facts (its signals and the conversations it was judged against).
 */
import type { Clock } from '../util/clock.ts';
import type { JsonObject } from '../util/json.ts';
import type { Termination } from './classify.ts';
import type { EventKind } from '../native/events.ts';
import type { NativeArgv } from '../native/argv.ts';
import type { NativeQueryFn } from '../native/version.ts';
import type { Ingest } from './ingest.ts';
import type { PermissionPort } from './control-route.ts';
import type { SessionLock } from './session-lock.ts';
import type { RunRequest, RunState } from './types.ts';
import type { OpenConversation } from './turns.ts';
import type { PreparedSupervisor, SupervisedOutcome, SupervisedSpec } from '../supervisor/parent/run-supervised.ts';
import type { SupervisorCommand } from '../supervisor/parent/supervisor-command.ts';

export interface ExecuteDeps {
  readonly clock: Clock;
  /** Asserts the version of the binary about to run (throws a ToolError with a native_version_* code). */
  readonly checkVersion: (bin: string, query: NativeQueryFn) => Promise<void>;
  /** Starts an idle supervisor; it is prepared while the version check runs so their startups overlap. */
  readonly prepareSupervisor: (command?: SupervisorCommand) => PreparedSupervisor;
  readonly sessionLock: SessionLock;
  /** Ids of the saved conversations of a directory, newest first (for honest continue reporting). */
  readonly listSessionIds: (cwd: string) => string[];
  readonly nativeEnv: Readonly<Record<string, string>>;
  /** Ladder and tracking tuning forwarded to the supervisor. */
  readonly supervision?: Pick<SupervisedSpec, 'interruptGraceMs' | 'termGraceMs' | 'killGraceMs' | 'trackIntervalMs' | 'supervisorCommand'>;
}

export interface PreparedRun {
  readonly request: RunRequest;
  /** Absolute path of the resolved native binary. */
  readonly bin: string;
  readonly argv: NativeArgv;
  /** Variables of this run alone, set over the adapter's native environment. */
  readonly env?: Readonly<Record<string, string>>;
}

export interface RunExecutionHooks {
  onState(state: RunState): void;
  /** Per native event, only when progress is wanted. */
  readonly onEvent?: ((kind: EventKind, event: JsonObject) => void) | undefined;
  /** Raw native stdout bytes, before framing (the CLI projection keeps them to print them unchanged). */
  readonly onStdout?: ((chunk: Buffer) => void) | undefined;
  /** The supervised outcome, when a supervisor ran. */
  readonly onOutcome?: ((outcome: SupervisedOutcome) => void) | undefined;
  /** Where the native's can_use_tool requests go (an ask_host run's broker); absent: each is denied at once. */
  readonly permissions?: PermissionPort | undefined;
}

/**
 * The native's open stdin (stream-json input), for the run's whole life: control answers and further turns.
 * `send` is false (nothing sent) before the native was handed its run, after `end`, or once the run is
 * terminating; `end` is final.
 */
export interface NativeInput {
  send(data: string): boolean;
  end(): void;
}

/** A NativeInput that forwards to the supervised run once it exists (an `end` before that is kept). */
export interface NativeInputSlot extends NativeInput {
  attach(target: NativeInput): void;
}

export function createNativeInputSlot(): NativeInputSlot {
  let target: NativeInput | null = null;
  let ended = false;
  return {
    send: (data) => !ended && target !== null && target.send(data),
    end() {
      if (ended) return;
      ended = true;
      target?.end();
    },
    attach(next) {
      target = next;
      if (ended) next.end();
    },
  };
}

/** What every step of one run shares: built once per run rather than threaded as positional parameters. */
export interface RunScope {
  readonly deps: ExecuteDeps;
  readonly prepared: PreparedRun;
  readonly hooks: RunExecutionHooks;
  readonly ingest: Ingest;
  /** The native's stdin after the prompt (nothing is sent to a native started with a text prompt). */
  readonly input: NativeInputSlot;
  /** An open run's conversation (keep_open): what happens at each turn's result; null for one-turn runs. */
  readonly open: OpenConversation | null;
  /** The run's cancel signal. */
  readonly signal: AbortSignal;
  /** Aborts when timeout_seconds has passed. */
  readonly deadline: AbortSignal;
  /** The cwd's saved conversations, newest first, as last read (continue runs only; re-read after the lock). */
  knownIds: string[];
}

/** Cancel wins over the deadline; null while neither has fired. */
export function interrupted(scope: RunScope): Termination | null {
  return scope.signal.aborted ? 'cancel' : scope.deadline.aborted ? 'timeout' : null;
}
