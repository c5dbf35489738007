/**
 * How a run's classification is judged from what its steps left: the ingested output, the supervised
 * outcome (or its absence), the termination reason and any error decided before the native process started.
 */
import { classifyRun, type Classification, type ClassifyInput, type Termination } from './classify.ts';
import type { ToolErrorData } from '../tool-errors.ts';
import type { SupervisedOutcome } from '../supervisor/parent/run-supervised.ts';
import type { RunScope } from './run-scope.ts';
import type { CancelStep } from './types.ts';

/** The run ends before any process of it was started. */
export function endEarly(scope: RunScope, termination: Termination | null, error: ToolErrorData | null): Classification {
  return finish(scope, { termination, spawnError: null, outcome: null, preSpawnError: error });
}

export interface FinishInput {
  readonly termination: Termination | null;
  readonly spawnError: SupervisedOutcome['spawnError'];
  readonly outcome: SupervisedOutcome | null;
  /** An error decided before the native process was spawned (version, session lock). */
  readonly preSpawnError: ToolErrorData | null;
  /** False when the run ended before the native process was asked for (only probes ran). */
  readonly spawned?: boolean;
  /** What ended a cancelled run; absent when nothing of it had started. */
  readonly cancelStep?: CancelStep;
}

/**
 * The run's classification, judged once. When only probes ran, the run is judged as if nothing had been
 * started and the probes' cleanup then becomes the run's.
 */
export function finish(scope: RunScope, input: FinishInput): Classification {
  const { outcome } = input;
  const probesOnly = input.spawned === false && outcome !== null;
  const cleanup = cleanupOf(outcome);
  const native = probesOnly ? null : outcome;
  const classification = classifyRun({
    ingest: scope.ingest.snapshot(),
    exit: native?.exit ?? null,
    termination: input.termination,
    ...(input.cancelStep === undefined ? {} : { cancelStep: input.cancelStep }),
    spawnError: input.spawnError,
    cleanup: probesOnly ? NOTHING_STARTED : cleanup,
    stderrTail: native?.stderrTail ?? '',
    versionProof: native?.versionProof ?? null,
    session: scope.prepared.request.session,
    continueKnownSessionIds: scope.knownIds,
  });
  const judged = withRunError(classification, input, native);
  return probesOnly ? withProbeCleanup(judged, cleanup) : judged;
}

/** The error that outranks what the native output looks like, when the run has one. */
function withRunError(classification: Classification, input: FinishInput, native: SupervisedOutcome | null): Classification {
  if (input.preSpawnError !== null && input.termination === null) {
    return { ...classification, is_error: true, error: input.preSpawnError };
  }
  // The supervisor died mid-run: its cgroup proves cleanup, but how the native ended is unknown. That loss
  // is the run's error, not whatever the cut-off output looks like.
  if (native !== null && native.cleanup === null && native.exit === null && input.termination === null) {
    return { ...classification, is_error: true, error: { code: 'supervisor_failed', message: describeLostSupervisor(native) } };
  }
  return classification;
}

/** A run that ended while only probes ran: their cleanup, confirmed or not, is the run's. */
function withProbeCleanup(before: Classification, cleanup: ClassifyInput['cleanup']): Classification {
  if (cleanup.confirmed) return { ...before, cleanup_proof: cleanup.proof };
  const cleanupError = { code: cleanup.code ?? 'cleanup_unconfirmed', message: cleanup.error ?? 'cleanup could not be proven' };
  return {
    ...before,
    cleanup_confirmed: false,
    cleanup_error: cleanupError,
    cleanup_proof: cleanup.proof,
    is_error: true,
    error: before.error ?? cleanupError,
  };
}

/** Nothing of the run was started, so nothing needed cleaning. */
const NOTHING_STARTED: ClassifyInput['cleanup'] = { confirmed: true, error: null, proof: null };

/** The run's cleanup as the supervisor reported it, or as the adapter established it when the supervisor died. */
function cleanupOf(outcome: SupervisedOutcome | null): ClassifyInput['cleanup'] {
  if (outcome === null) return NOTHING_STARTED;
  if (outcome.cleanup !== null) {
    const { confirmed, proof } = outcome.cleanup;
    return { confirmed, proof, error: outcome.cleanup.error ?? (confirmed ? null : survivorsText(outcome)) };
  }
  // The run's cgroup, ended by the adapter and shown empty by the kernel, proves cleanup without the report.
  if (outcome.fallbackProof === 'cgroup') return { confirmed: true, error: null, proof: 'cgroup' };
  // Named by what the adapter's fallback looked with: off Linux one ps table, never /proc.
  return { confirmed: false, error: describeLostSupervisor(outcome), code: 'supervisor_failed', proof: outcome.fallbackSource };
}

/** How much of a crashed supervisor's error line a message quotes. */
export const MAX_LAST_WORDS_CHARS = 300;

export function describeLostSupervisor(outcome: SupervisedOutcome): string {
  const exit = outcome.supervisorExit;
  const how = exit === null ? 'exit not observed' : (exit.signal ?? `exit code ${String(exit.code)}`);
  if (outcome.fallbackProof === 'cgroup')
    return `the supervisor ended (${how}) without a cleanup report; the adapter ended the run's cgroup and the kernel showed it empty`;
  return `the supervisor ended (${how}) without a cleanup report; the adapter killed ${outcome.fallbackKilled} leftover process(es) but cannot prove nothing survived${portableLeft(outcome)}${lastWords(outcome.crashText)}`;
}

/** What the darwin fallback saw and left alone, or why it could not look; '' on Linux. */
function portableLeft(outcome: SupervisedOutcome): string {
  if (outcome.fallbackError !== null) return ` (it could not look: ${outcome.fallbackError})`;
  return outcome.fallbackLeft > 0
    ? `; ${outcome.fallbackLeft} other process(es) of the run were seen and left alone (not provably the run's)`
    : '';
}

/** The error line of a supervisor's crash text (its uncaught exception), for the message; '' when none. */
function lastWords(crashText: string | null): string {
  const lines = (crashText ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const line = lines.find((l) => /^[A-Za-z]*Error\b/.test(l)) ?? lines.at(-1);
  return line === undefined ? '' : `; it wrote: ${line.slice(0, MAX_LAST_WORDS_CHARS)}`;
}

function survivorsText(outcome: SupervisedOutcome): string {
  const survivors = outcome.cleanup?.survivors ?? [];
  return `${survivors.length} process(es) could not be proven dead: ${survivors
    .slice(0, 8)
    .map((s) => s.pid)
    .join(', ')}`;
}
