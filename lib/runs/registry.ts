/**
 * The in-memory registry of runs owned by one adapter process.
 *
 * Bounds: at most MAX_RETAINED_RUNS entries, of which at most MAX_ACTIVE_RUNS are active
 * (not completed, or completed with cleanup unconfirmed). A reservation at capacity evicts the
 * completed, cleanup-confirmed run that settled first; a reservation that cannot be honoured
 * throws a ToolError and changes nothing.
 *
 * Synchronous claude.run runs are reserved and retained exactly like detached ones: their result
 * carries a run_id, so claude.run.result/events can read it after the response, claude.run.list and
 * the work snapshot show it, and it leaves through release or eviction like any handle. Dropping it
 * at response time would make a returned run_id dangle and hide work the host may still observe.
 * With defaults, capacity_exhausted is a guard: active runs are bounded by 4 < 32, so a full
 * registry always holds an evictable run. It becomes reachable when maxActiveRuns >= maxRetainedRuns.
 */
import type { Clock } from '../util/clock.ts';
import type { RunState } from './types.ts';
import { ToolError } from '../tool-errors.ts';
import { isRunId, newRunId, uuidFromRandom } from './ids.ts';
import type { RandomBytes } from './ids.ts';

export const MAX_RETAINED_RUNS = 32;
export const MAX_ACTIVE_RUNS = 4;
/** Ended ids remembered only to say "evicted" or "released" instead of "unknown". */
export const MAX_REMEMBERED_ENDED_IDS = 256;
const MAX_RUN_ID_ATTEMPTS = 4;

export type RunEndReason = 'evicted' | 'released';

/** One retained run. Fields change only through the registry; `live` is the integrator's slot. */
export interface RunEntry<T> {
  readonly run_id: string;
  readonly created_at: string;
  readonly settled_at: string | null;
  /** The creation call's work-invocation UUID; fixed at reserve, never rebound. */
  readonly acquired_by: string | null;
  readonly sync: boolean;
  readonly state: RunState;
  readonly completed: boolean;
  readonly cleanup_confirmed: boolean;
  readonly session_id: string | null;
  readonly live: T;
}

export type RunListItem = {
  run_id: string;
  state: RunState;
  completed: boolean;
  cleanup_confirmed: boolean;
  created_at: string;
  settled_at: string | null;
  session_id: string | null;
  acquired_by: string | null;
};

export interface ReserveOptions<T> {
  readonly acquiredBy: string | null;
  readonly sync: boolean;
  /** Defaults to checking_version (the first step of every run). */
  readonly state?: Exclude<RunState, 'completed'>;
  /** Builds the live slot once the reservation is certain; if it throws, nothing changes. */
  readonly live: (runId: string) => T;
}

export interface RunPatch {
  readonly state?: Exclude<RunState, 'completed'>;
  readonly sessionId?: string | null;
}

export interface SettleOptions {
  readonly cleanupConfirmed: boolean;
  readonly sessionId?: string | null;
}

export interface RegistryOptions {
  readonly clock: Clock;
  readonly random: RandomBytes;
  /** The server instance (a UUID) every run id carries; asked at the first reservation. Default: a random one. */
  readonly instance?: () => string;
  readonly maxRetainedRuns?: number;
  readonly maxActiveRuns?: number;
}

export interface RunRegistry<T> {
  /** Monotonic; advances once per change visible in the work snapshot. Starts at 0. */
  readonly revision: number;
  reserve(options: ReserveOptions<T>): RunEntry<T>;
  /** Throws ToolError run_not_found (saying unknown, evicted or released). */
  get(runId: string): RunEntry<T>;
  update(runId: string, patch: RunPatch): RunEntry<T>;
  settle(runId: string, options: SettleOptions): RunEntry<T>;
  /** A late cleanup confirmation for a run that settled unconfirmed. */
  confirmCleanup(runId: string): RunEntry<T>;
  /** Removes and returns a completed, cleanup-confirmed run; else run_active / cleanup_unconfirmed. */
  release(runId: string): RunEntry<T>;
  /** Retained runs in creation order. */
  list(): RunListItem[];
  entries(): readonly RunEntry<T>[];
  counts(): { retained: number; active: number };
}

type Mutable<E> = { -readonly [K in keyof E]: E[K] };
type Internal<T> = Mutable<RunEntry<T>>;

/** Active work or unconfirmed cleanup: counts toward MAX_ACTIVE_RUNS and is never evicted. */
export function isActiveRun(entry: Pick<RunEntry<unknown>, 'completed' | 'cleanup_confirmed'>): boolean {
  return !entry.completed || !entry.cleanup_confirmed;
}

/** One registry's runs and counters; the functions below are its operations. */
interface RegistryState<T> {
  readonly clock: Clock;
  readonly random: RandomBytes;
  readonly instance: () => string;
  readonly maxRetained: number;
  readonly maxActive: number;
  /** Insertion order = creation order. */
  readonly runs: Map<string, Internal<T>>;
  readonly ended: Map<string, RunEndReason>;
  /** run_id -> settle sequence. */
  readonly settledOrder: Map<string, number>;
  settleSeq: number;
  revision: number;
}

export function createRunRegistry<T>(options: RegistryOptions): RunRegistry<T> {
  const registry: RegistryState<T> = {
    clock: options.clock,
    random: options.random,
    instance: options.instance ?? onceRandomInstance(options.random),
    maxRetained: validateBound('maxRetainedRuns', options.maxRetainedRuns ?? MAX_RETAINED_RUNS),
    maxActive: validateBound('maxActiveRuns', options.maxActiveRuns ?? MAX_ACTIVE_RUNS),
    runs: new Map(),
    ended: new Map(),
    settledOrder: new Map(),
    settleSeq: 0,
    revision: 0,
  };
  const get = (runId: string): RunEntry<T> => lookup(registry, runId);
  return {
    get revision() {
      return registry.revision;
    },
    reserve: (reserveOptions) => reserveRun(registry, reserveOptions),
    get,
    update: (runId, patch) => updateRun(registry, runId, patch),
    settle: (runId, settleOptions) => settleRun(registry, runId, settleOptions),
    confirmCleanup: (runId) => confirmRunCleanup(registry, runId),
    release: (runId) => releaseRun(registry, runId),
    list: () => [...registry.runs.values()].map(listItem),
    entries: () => [...registry.runs.values()],
    counts: () => ({ retained: registry.runs.size, active: activeCount(registry) }),
  };
}

function onceRandomInstance(random: RandomBytes): () => string {
  let instance: string | null = null;
  return () => (instance ??= uuidFromRandom(random));
}

function isoNow(registry: RegistryState<unknown>): string {
  return new Date(registry.clock.wallNow()).toISOString();
}

function activeCount(registry: RegistryState<unknown>): number {
  return [...registry.runs.values()].filter(isActiveRun).length;
}

function remember(registry: RegistryState<unknown>, runId: string, reason: RunEndReason): void {
  const { ended } = registry;
  ended.delete(runId);
  ended.set(runId, reason);
  for (const oldest of ended.keys()) {
    if (ended.size <= MAX_REMEMBERED_ENDED_IDS) break;
    ended.delete(oldest);
  }
}

/** Drops a run for good, remembering why so a later lookup can say so. */
function forget(registry: RegistryState<unknown>, runId: string, reason: RunEndReason): void {
  registry.runs.delete(runId);
  registry.settledOrder.delete(runId);
  remember(registry, runId, reason);
}

function lookup<T>(registry: RegistryState<T>, runId: string): Internal<T> {
  const entry = registry.runs.get(runId);
  if (entry) return entry;
  const shown = isRunId(runId) ? `run_id ${runId}` : 'this run_id';
  const reason = registry.ended.get(runId);
  const message =
    reason === 'released'
      ? `${shown} was released; its result and events are gone (the native conversation is untouched).`
      : reason === 'evicted'
        ? `${shown} was evicted to make room: at most ${registry.maxRetained} runs are retained, and the oldest settled run with confirmed cleanup goes first.`
        : `${shown} is unknown to this adapter process (never issued here, or forgotten; handles do not survive an adapter restart).`;
  throw new ToolError('run_not_found', message);
}

function freshRunId(registry: RegistryState<unknown>): string {
  for (let attempt = 0; attempt < MAX_RUN_ID_ATTEMPTS; attempt++) {
    const runId = newRunId(registry.random, registry.instance());
    if (!registry.runs.has(runId) && !registry.ended.has(runId)) return runId;
  }
  throw new Error(`random source repeated run ids ${MAX_RUN_ID_ATTEMPTS} times`);
}

function evictionVictim<T>(registry: RegistryState<T>): Internal<T> | undefined {
  const { settledOrder } = registry;
  let victim: Internal<T> | undefined;
  for (const entry of registry.runs.values()) {
    if (isActiveRun(entry)) continue;
    const seq = settledOrder.get(entry.run_id) ?? 0;
    if (!victim || seq < (settledOrder.get(victim.run_id) ?? 0)) victim = entry;
  }
  return victim;
}

/** The run a reservation at capacity evicts (undefined below capacity); throws when none may go. */
function victimFor<T>(registry: RegistryState<T>): Internal<T> | undefined {
  const { runs, maxActive } = registry;
  let victim: Internal<T> | undefined;
  if (runs.size >= registry.maxRetained) {
    victim = evictionVictim(registry);
    if (!victim) {
      throw new ToolError(
        'capacity_exhausted',
        `All ${runs.size} retained runs are active or have unconfirmed cleanup, so none can be evicted; nothing was started. Wait for a run to settle, then retry.`,
      );
    }
  }
  const active = activeCount(registry);
  if (active >= maxActive) {
    throw new ToolError(
      'active_limit_reached',
      `${active} runs already have active work or unconfirmed cleanup (limit ${maxActive}); nothing was started. Wait for one to settle or cancel one, then retry.`,
    );
  }
  return victim;
}

function reserveRun<T>(registry: RegistryState<T>, { acquiredBy, sync, state = 'checking_version', live }: ReserveOptions<T>): RunEntry<T> {
  if ((state as RunState) === 'completed') throw new Error('a run cannot be reserved completed');
  // Decide everything before mutating anything: a refused start changes nothing.
  const victim = victimFor(registry);
  const runId = freshRunId(registry);
  const slot = live(runId);
  if (victim) forget(registry, victim.run_id, 'evicted');
  const entry: Internal<T> = {
    run_id: runId,
    created_at: isoNow(registry),
    settled_at: null,
    acquired_by: acquiredBy,
    sync,
    state,
    completed: false,
    cleanup_confirmed: false,
    session_id: null,
    live: slot,
  };
  registry.runs.set(runId, entry);
  registry.revision++; // one atomic change, eviction included
  return entry;
}

function updateRun<T>(registry: RegistryState<T>, runId: string, patch: RunPatch): RunEntry<T> {
  const entry = lookup(registry, runId);
  if (entry.completed) throw new Error(`run ${runId} is completed; update() cannot change a settled run`);
  if (patch.sessionId !== undefined) entry.session_id = patch.sessionId;
  if (patch.state !== undefined && patch.state !== entry.state) {
    if ((patch.state as RunState) === 'completed') throw new Error('use settle() to complete a run');
    entry.state = patch.state;
    registry.revision++;
  }
  return entry;
}

function settleRun<T>(registry: RegistryState<T>, runId: string, { cleanupConfirmed, sessionId }: SettleOptions): RunEntry<T> {
  const entry = lookup(registry, runId);
  if (entry.completed) throw new Error(`run ${runId} is already settled`);
  entry.state = 'completed';
  entry.completed = true;
  entry.cleanup_confirmed = cleanupConfirmed;
  entry.settled_at = isoNow(registry);
  registry.settledOrder.set(runId, ++registry.settleSeq);
  if (sessionId !== undefined) entry.session_id = sessionId;
  registry.revision++;
  return entry;
}

function confirmRunCleanup<T>(registry: RegistryState<T>, runId: string): RunEntry<T> {
  const entry = lookup(registry, runId);
  if (!entry.completed) throw new Error(`run ${runId} has not settled; settle() reports cleanup`);
  if (!entry.cleanup_confirmed) {
    entry.cleanup_confirmed = true;
    registry.revision++;
  }
  return entry;
}

function releaseRun<T>(registry: RegistryState<T>, runId: string): RunEntry<T> {
  const entry = lookup(registry, runId);
  if (!entry.completed) {
    throw new ToolError(
      'run_active',
      `The run is still active (state ${entry.state}); cancel it or wait for it to settle before releasing it.`,
    );
  }
  if (!entry.cleanup_confirmed) {
    throw new ToolError(
      'cleanup_unconfirmed',
      'Process cleanup of this run was not confirmed, so it stays retained and cannot be released.',
    );
  }
  forget(registry, runId, 'released');
  registry.revision++;
  return entry;
}

function listItem(e: RunEntry<unknown>): RunListItem {
  return {
    run_id: e.run_id,
    state: e.state,
    completed: e.completed,
    cleanup_confirmed: e.cleanup_confirmed,
    created_at: e.created_at,
    settled_at: e.settled_at,
    session_id: e.session_id,
    acquired_by: e.acquired_by,
  };
}

function validateBound(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${value}`);
  return value;
}
