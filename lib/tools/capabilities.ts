/**
 * The capabilities resource: what this server is and may do (adapter, native binary, protocol dates, the
 * cli-tree contract, every bound, the cleanup backend, git, the operator's budget). Pure over the facts the
 * providers hand it; resolving the binary and asking git are the two callbacks.
 */
import { copyJsonObject, type JsonObject } from '../util/json.ts';
import type { CliTree } from '../native/tree.ts';
import { ALL_PROTOCOL_VERSIONS } from '../rpc/negotiate.ts';
import { MAX_ACTIVE_RUNS, MAX_RETAINED_RUNS } from '../runs/registry.ts';
import { MAX_EVENTS, MAX_EVENT_BYTES } from '../runs/event-ring.ts';
import { MAX_FINAL_BYTES } from '../runs/ingest.ts';
import { MAX_NATIVE_FRAME_BYTES } from '../native/events.ts';
import { describeCleanup, type CleanupBackend } from '../supervisor/parent/cleanup-backend.ts';
import type { SupportedPlatform } from '../process/platform.ts';
import type { BudgetSnapshot } from '../runs/budget.ts';
import type { GitAvailability } from '../worktree/fs-edge.ts';
import { ToolError } from '../tool-errors.ts';
import type { StateStatus } from '../state/store.ts';
import { MAX_RECORD_BYTES, RECORD_FORMAT_VERSION } from '../state/record.ts';
import { MAX_RECORDS, MAX_RECORD_AGE_MS } from '../state/sweep.ts';
import { ADAPTER_VERSION } from '../version.ts';
import { MAX_OPEN_TURNS, MAX_QUEUED_MESSAGE_BYTES, MAX_QUEUED_MESSAGES, MAX_TURNS_KEPT } from '../runs/turns.ts';

export interface CapabilityFacts {
  readonly tree: CliTree;
  readonly maxTimeoutSeconds: number;
  /** The largest open_idle_seconds of a keep_open run (--max-open-idle-seconds). */
  readonly maxOpenIdleSeconds: number;
  /** The version the newest check asserted; null before the first. */
  readonly assertedVersion: string | null;
  readonly recursive: boolean;
  readonly cleanup: CleanupBackend;
  /** Runs tracked through /proc because their own cgroup could not be made (lib/supervisor/parent/cleanup-backend.ts). */
  readonly cleanupFallbackRuns: number;
  /** The platform decision this server made once (lib/process/platform.ts). */
  readonly platform: SupportedPlatform;
  /** The budget ledger's snapshot; null when the server has no budget. */
  readonly budget: BudgetSnapshot | null;
  readonly instanceId: string;
  /** The runs' records: whether this server keeps them, where, and why not (lib/state/store.ts). */
  readonly state: StateStatus;
  /** The native binary's path; throws a ToolError when it cannot be resolved. */
  binary(): string;
  worktree(): GitAvailability;
}

export function describeCapabilities(facts: CapabilityFacts): JsonObject {
  const { tree } = facts;
  let binary: string | null = null;
  let binaryError: string | null = null;
  try {
    binary = facts.binary();
  } catch (error) {
    binaryError = error instanceof ToolError ? error.code : 'native_not_found';
  }
  return {
    adapter: { name: 'claude-run-mcp', version: ADAPTER_VERSION, instance_id: facts.instanceId },
    native: {
      binary,
      binary_error: binaryError,
      asserted_version: facts.assertedVersion,
      tested_version: tree.native.tested_version,
      authentication: 'not checked: a version answer says nothing about login or API access',
    },
    protocol_versions: [...ALL_PROTOCOL_VERSIONS],
    // CliTree is deeply readonly (readonly arrays) and JsonObject is not: a copy, typed as it is built.
    cli_tree: copyJsonObject(tree),
    limits: {
      max_retained_runs: MAX_RETAINED_RUNS,
      max_active_runs: MAX_ACTIVE_RUNS,
      max_events_per_run: MAX_EVENTS,
      max_event_bytes_per_run: MAX_EVENT_BYTES,
      max_final_event_bytes: MAX_FINAL_BYTES,
      max_native_frame_bytes: MAX_NATIVE_FRAME_BYTES,
      max_timeout_seconds: facts.maxTimeoutSeconds,
      max_open_idle_seconds: facts.maxOpenIdleSeconds,
      max_open_turns: MAX_OPEN_TURNS,
      max_open_turns_kept: MAX_TURNS_KEPT,
      max_queued_messages: MAX_QUEUED_MESSAGES,
      max_queued_message_bytes: MAX_QUEUED_MESSAGE_BYTES,
      // Prompts never appear in argv (cli-tree.json `input`); the option that once chose it is kept, without effect.
      prompt_via_stdin: true,
      recursion_refused: facts.recursive,
    },
    cleanup: describeCleanup(facts.cleanup, facts.platform, facts.cleanupFallbackRuns),
    worktree: facts.worktree(),
    budget: facts.budget === null ? NO_BUDGET : { ...facts.budget },
    state: {
      ...facts.state,
      format_version: RECORD_FORMAT_VERSION,
      max_records: MAX_RECORDS,
      max_record_age_seconds: MAX_RECORD_AGE_MS / 1000,
      max_record_bytes: MAX_RECORD_BYTES,
    },
  };
}

/** The capabilities' budget when the server has none. */
const NO_BUDGET = { limit_usd: null, spent_usd: null, reserved_usd: null, remaining_usd: null, available_usd: null, runs_reserving: null };
