/**
 * The vendorable library face: one in-process adapter with the same tools, resources and limits as the
 * stdio server (`claude-run-mcp serve`), without a second transport. The host feeds parsed JSON-RPC
 * messages to handle(), writes what comes back, forwards onNotification() output (progress), and calls
 * close() when it is done: close() cancels every unsettled run and waits for its confirmed cleanup.
 */
import { isAbsolute } from 'node:path';
import { createAdapter, type Adapter } from './adapter.ts';
import { checkLibraryOptions, type LibraryServerOptions } from './cli/server-options.ts';
import type { SupervisorCommand } from './supervisor/parent/supervisor-command.ts';
import { createProviders } from './tools/providers.ts';
import { hostPlatform, PlatformUnsupported } from './process/platform.ts';

/**
 * The server options the library shares with `serve` (lib/cli/server-options.ts: claudeBin, maxTimeoutSeconds,
 * underscoreNames, promptViaStdin, cleanupBackend, budgetUsd; the same defaults and rules), and its own.
 * claudeBin defaults to the CLAUDE_BIN variable of `env`, then `claude` on its PATH. cleanupBackend 'cgroup'
 * throws CleanupBackendUnavailable where no cgroup can be had. budgetUsd is over 0, up to 1000000, with at
 * most 6 decimals: each run gets --max-budget-usd = what remains.
 */
export type ClaudeRunAdapterOptions = LibraryServerOptions & {
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
};

/** A bad option: RangeError for a number out of range, TypeError otherwise; `code` and the JSON `path` name it. */
export type OptionError = (RangeError | TypeError) & { readonly code: 'invalid_option_value'; readonly path: string };

/**
 * Validates the options, composes the providers and returns the adapter; throws PlatformUnsupported (code
 * `platform_unsupported`) on a platform lib/process/platform.ts refuses, and an OptionError on a bad option.
 */
export function createClaudeRunAdapter(options: ClaudeRunAdapterOptions = {}): Adapter {
  const platform = hostPlatform();
  if (platform.kind === 'refused') throw new PlatformUnsupported(platform);
  const checked = checkLibraryOptions(options);
  if (checked.kind === 'error') throw optionError(checked.problem.key, checked.problem.expected, checked.problem.range);
  const cwd = options.cwd ?? process.cwd();
  if (typeof cwd !== 'string' || !isAbsolute(cwd)) throw optionError('cwd', 'an absolute path', false);
  const providers = createProviders({
    ...checked.config,
    env: options.env ?? process.env,
    cwd,
    platform: platform.kind,
    ...(options.supervisorCommand === undefined ? {} : { supervision: { supervisorCommand: options.supervisorCommand } }),
  });
  return createAdapter({
    toolProvider: providers.toolProvider,
    resourceProvider: providers.resourceProvider,
    onClose: providers.close,
    ...(options.log === undefined ? {} : { log: options.log }),
  });
}

function optionError(key: string, expected: string, range: boolean): OptionError {
  const message = `${key} must be ${expected}`;
  return Object.assign(range ? new RangeError(message) : new TypeError(message), {
    code: 'invalid_option_value',
    path: `/${key}`,
  } as const);
}
