/** Startup options of `serve`, parsed into a typed config. Pure: argv in, config or a usage error out. */
import { MAX_FRAME_BYTES } from '../rpc/connection.ts';
import { CLEANUP_BACKEND_OPTIONS, type CleanupBackendOption } from '../supervisor/parent/cleanup-backend.ts';

export interface ServeConfig {
  /** --claude-bin PATH; null means "resolve it the usual way" (CLAUDE_BIN, then PATH). */
  readonly claudeBin: string | null;
  /** --max-timeout-seconds N: the largest timeout_seconds a call may ask for. */
  readonly maxTimeoutSeconds: number;
  /** --underscore-names: list tools as claude_run etc. instead of claude.run. */
  readonly underscoreNames: boolean;
  /** --prompt-via-stdin: hand the prompt to the native process on stdin rather than argv. */
  readonly promptViaStdin: boolean;
  /** --max-frame-bytes N: inbound JSON-RPC frame bound. */
  readonly maxFrameBytes: number;
  /** --cleanup-backend auto|cgroup|process_scan: how each run's cleanup is proven (docs/supervisor.md). */
  readonly cleanupBackend: CleanupBackendOption;
  /** --budget-usd N: the cap on the total reported cost of the runs this server starts; null: no budget. */
  readonly budgetUsd: number | null;
}

export const DEFAULT_MAX_TIMEOUT_SECONDS = 1800;
/** Bounds for the numeric options, so a typo cannot configure something absurd. */
export const MAX_TIMEOUT_SECONDS_LIMIT = 24 * 60 * 60;
export const MIN_FRAME_BYTES = 1024;
export const MAX_FRAME_BYTES_LIMIT = 1024 * 1024 * 1024;
/** The largest --budget-usd; a larger one is a typo, not a budget. */
export const MAX_BUDGET_USD_LIMIT = 1_000_000;

/** `claude-run-mcp --help`: the commands, and the options of serve (the default command). */
export const SERVE_USAGE = `usage: claude-run-mcp [serve] [options]     serve MCP over stdio (the default command)
       claude-run-mcp print [options] -- PROMPT   run one prompt, print the native JSON result (print --help)
       claude-run-mcp check [--claude-bin PATH]  compare the installed Claude Code with cli-tree.json (check --help)
       claude-run-mcp --version                  the adapter version and the tested Claude Code version

serve options:
  --claude-bin PATH          Claude Code binary to run (default: CLAUDE_BIN, then PATH)
  --max-timeout-seconds N    largest accepted timeout_seconds, 1 to ${MAX_TIMEOUT_SECONDS_LIMIT} (default ${DEFAULT_MAX_TIMEOUT_SECONDS})
  --underscore-names         list tools with underscores (claude_run) instead of dots (claude.run)
  --prompt-via-stdin         pass the prompt to claude on stdin instead of argv
                             (both also take =true or =false)
  --max-frame-bytes N        inbound JSON-RPC frame bound in bytes, ${MIN_FRAME_BYTES} to ${MAX_FRAME_BYTES_LIMIT} (default ${MAX_FRAME_BYTES})
  --cleanup-backend B        how cleanup is proven: auto (a cgroup per run where one can be had, else /proc
                             scans; the default), cgroup (refuse to start without one), process_scan
  --budget-usd N             cap the total reported cost of the runs this server starts, in dollars with up
                             to 6 decimals, up to ${MAX_BUDGET_USD_LIMIT}; each run gets --max-budget-usd = what remains
                             (0 or empty: no budget, the default)
  -h, --help                 print this help`;

export type ParseResult =
  | { readonly kind: 'config'; readonly config: ServeConfig }
  | { readonly kind: 'help' }
  | { readonly kind: 'error'; readonly message: string };

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export function parseServeArgs(argv: readonly string[]): ParseResult {
  const config: Mutable<ServeConfig> = {
    claudeBin: null,
    maxTimeoutSeconds: DEFAULT_MAX_TIMEOUT_SECONDS,
    underscoreNames: false,
    promptViaStdin: false,
    maxFrameBytes: MAX_FRAME_BYTES,
    cleanupBackend: 'auto',
    budgetUsd: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const takeValue = (): string | null => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      // `--` and other flags are never taken as a value.
      if (next === undefined || next.startsWith('--')) return null;
      i++;
      return next;
    };
    switch (name) {
      case '--help':
      case '-h':
        return { kind: 'help' };
      case '--underscore-names':
      case '--prompt-via-stdin': {
        // An explicit =true/=false lets a fixed argument template (an MCP Bundle's user_config) set or clear it.
        if (inline !== undefined && inline !== 'true' && inline !== 'false') return { kind: 'error', message: `${name} takes no value (or exactly =true, =false)` };
        const on = inline !== 'false';
        if (name === '--underscore-names') config.underscoreNames = on;
        else config.promptViaStdin = on;
        break;
      }
      case '--claude-bin': {
        const value = takeValue();
        if (value === null || value === '') return { kind: 'error', message: '--claude-bin needs a path to the Claude Code binary' };
        config.claudeBin = value;
        break;
      }
      case '--cleanup-backend': {
        const value = takeValue();
        const known = CLEANUP_BACKEND_OPTIONS.find((o) => o === value);
        if (known === undefined) return { kind: 'error', message: `--cleanup-backend needs one of ${CLEANUP_BACKEND_OPTIONS.join(', ')}` };
        config.cleanupBackend = known;
        break;
      }
      case '--budget-usd': {
        const parsed = parseBudgetUsd(takeValue());
        if (parsed === undefined) return { kind: 'error', message: `--budget-usd needs dollars from 0 to ${MAX_BUDGET_USD_LIMIT} with at most 6 decimals (0: no budget)` };
        config.budgetUsd = parsed;
        break;
      }
      case '--max-timeout-seconds':
      case '--max-frame-bytes': {
        const value = takeValue();
        const [min, max] = name === '--max-timeout-seconds' ? [1, MAX_TIMEOUT_SECONDS_LIMIT] : [MIN_FRAME_BYTES, MAX_FRAME_BYTES_LIMIT];
        const parsed = value !== null && /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
        if (!(parsed >= min && parsed <= max)) return { kind: 'error', message: `${name} needs an integer from ${min} to ${max}` };
        if (name === '--max-timeout-seconds') config.maxTimeoutSeconds = parsed;
        else config.maxFrameBytes = parsed;
        break;
      }
      default:
        return { kind: 'error', message: arg.startsWith('-') ? `unknown option: ${truncate(arg)}` : `unknown command or argument: ${truncate(arg)} (commands: serve, print, check)` };
    }
  }
  return { kind: 'config', config };
}

/** Dollars as typed (`2`, `0.5`, `0.000001`); 0 or empty (an unset `.mcpb` setting) is null, no budget; undefined: invalid. */
export function parseBudgetUsd(value: string | null): number | null | undefined {
  if (value === '') return null;
  if (value === null || !/^[0-9]{1,7}(\.[0-9]{1,6})?$/.test(value)) return undefined;
  const dollars = Number(value);
  if (dollars > MAX_BUDGET_USD_LIMIT) return undefined;
  return dollars === 0 ? null : dollars;
}

function truncate(text: string): string {
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}
