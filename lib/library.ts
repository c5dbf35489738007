/**
 * The vendorable library face: one in-process adapter with the same tools, resources and limits as the
 * stdio server (`claude-run-mcp serve`), without a second transport. The host feeds parsed JSON-RPC
 * messages to handle(), writes what comes back, forwards onNotification() output (progress), and calls
 * close() when it is done: close() cancels every unsettled run and waits for its confirmed cleanup.
 */
import { isAbsolute } from 'node:path';
import { createAdapter, type Adapter } from './adapter.ts';
import { DEFAULT_MAX_TIMEOUT_SECONDS, MAX_BUDGET_USD_LIMIT, MAX_TIMEOUT_SECONDS_LIMIT } from './cli/args.ts';
import type { SupervisorCommand } from './supervisor/parent/supervisor-command.ts';
import { CLEANUP_BACKEND_OPTIONS, type CleanupBackendOption } from './supervisor/parent/cleanup-backend.ts';
import { createHosts } from './tools/host.ts';

export interface ClaudeRunAdapterOptions {
  /** Claude Code binary; default: the CLAUDE_BIN variable of `env`, then `claude` on its PATH. */
  readonly claudeBin?: string;
  /** Largest timeout_seconds a call may ask for (1 to 86400; default 1800), as --max-timeout-seconds. */
  readonly maxTimeoutSeconds?: number;
  /** List tools as claude_run, claude_run_start, … (as --underscore-names). */
  readonly underscoreNames?: boolean;
  /** Always hand prompts to the native process on stdin, never in argv (as --prompt-via-stdin). */
  readonly promptViaStdin?: boolean;
  /** The environment the native environment derives from; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Absolute default working directory of runs (and base of a relative claudeBin); default process.cwd(). */
  readonly cwd?: string;
  /** Diagnostics (the server writes them to stderr); default: discarded. */
  readonly log?: (line: string) => void;
  /**
   * How to start a supervisor child. The default works from source (tsx must be resolvable) and from the
   * single-file bundle; a host that bundles lib/ into its own file either dispatches argv[2] ===
   * SUPERVISOR_ARGV_FLAG to runSupervisor() or points this at `[node, dist/claude-run-mcp.cjs, '__supervisor']`.
   */
  readonly supervisorCommand?: SupervisorCommand;
  /**
   * How each run's cleanup is proven: 'auto' (default: a cgroup v2 of the run's own where one can be had, else
   * /proc tracking), 'cgroup' (throws CleanupBackendUnavailable where none can be had), 'process_scan'.
   */
  readonly cleanupBackend?: CleanupBackendOption;
  /**
   * The operator's budget in dollars (as --budget-usd): the cap on the total reported cost of the runs this
   * adapter starts; each run gets --max-budget-usd = what remains. Over 0, up to 1000000, at most 6 decimals.
   */
  readonly budgetUsd?: number;
}

/** Validates the options, composes the hosts and returns the adapter; throws TypeError/RangeError on bad options. */
export function createClaudeRunAdapter(options: ClaudeRunAdapterOptions = {}): Adapter {
  const maxTimeoutSeconds = options.maxTimeoutSeconds ?? DEFAULT_MAX_TIMEOUT_SECONDS;
  if (!Number.isInteger(maxTimeoutSeconds) || maxTimeoutSeconds < 1 || maxTimeoutSeconds > MAX_TIMEOUT_SECONDS_LIMIT) {
    throw new RangeError(`maxTimeoutSeconds must be an integer from 1 to ${MAX_TIMEOUT_SECONDS_LIMIT}`);
  }
  if (options.claudeBin !== undefined && (typeof options.claudeBin !== 'string' || options.claudeBin === '' || options.claudeBin.includes('\0'))) {
    throw new TypeError('claudeBin must be a non-empty path');
  }
  const cwd = options.cwd ?? process.cwd();
  if (typeof cwd !== 'string' || !isAbsolute(cwd)) throw new TypeError('cwd must be an absolute path');
  if (options.cleanupBackend !== undefined && !CLEANUP_BACKEND_OPTIONS.includes(options.cleanupBackend)) {
    throw new TypeError(`cleanupBackend must be one of ${CLEANUP_BACKEND_OPTIONS.join(', ')}`);
  }
  const budgetUsd = options.budgetUsd;
  if (budgetUsd !== undefined && !isBudgetUsd(budgetUsd)) {
    throw new RangeError(`budgetUsd must be a number over 0 and up to ${MAX_BUDGET_USD_LIMIT}, with at most 6 decimals`);
  }
  const hosts = createHosts({
    claudeBin: options.claudeBin ?? null,
    maxTimeoutSeconds,
    underscoreNames: options.underscoreNames === true,
    promptViaStdin: options.promptViaStdin === true,
    env: options.env ?? process.env,
    cwd,
    ...(options.supervisorCommand === undefined ? {} : { supervision: { supervisorCommand: options.supervisorCommand } }),
    ...(options.cleanupBackend === undefined ? {} : { cleanupBackend: options.cleanupBackend }),
    budgetUsd: budgetUsd ?? null,
  });
  return createAdapter({
    toolHost: hosts.toolHost,
    resourceHost: hosts.resourceHost,
    onClose: hosts.close,
    ...(options.log === undefined ? {} : { log: options.log }),
  });
}

/** A budget the ledger keeps exactly: whole micro-dollars, within bounds. */
function isBudgetUsd(value: unknown): value is number {
  return typeof value === 'number' && value > 0 && value <= MAX_BUDGET_USD_LIMIT && Math.abs(value * 1e6 - Math.round(value * 1e6)) < 1e-6;
}
