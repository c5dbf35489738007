/**
 * The server options, declared once: each one's flag, library key (its key here), value rule, default, help,
 * and whether the MCP Bundle (manifest.json's user_config) and the MCP Registry (server.json's arguments) offer
 * it. One validator checks a value against its rule for both faces: the command line (lib/cli/args.ts turns
 * text into values first) and the library (lib/library.ts). spec/cli/server-options.test.ts fails when
 * manifest.json, server.json, the help or the docs drift from this table. Pure.
 */
import { MAX_FRAME_BYTES } from '../rpc/connection.ts';
import { CLEANUP_BACKEND_OPTIONS } from '../supervisor/parent/cleanup-backend.ts';
import { assertNever } from '../util/assert-never.ts';
import { DEFAULT_MAX_OPEN_IDLE_SECONDS } from '../tools/open-input.ts';

export const DEFAULT_MAX_TIMEOUT_SECONDS = 1800;
/** Bounds for the numeric options, so a typo cannot configure something absurd. */
export const MAX_TIMEOUT_SECONDS_LIMIT = 24 * 60 * 60;
export const MIN_FRAME_BYTES = 1024;
export const MAX_FRAME_BYTES_LIMIT = 1024 * 1024 * 1024;
/** The largest budget; a larger one is a typo, not a budget. */
export const MAX_BUDGET_USD_LIMIT = 1_000_000;

export type OptionRule =
  /** A path; null (the default): resolved the usual way. */
  | { readonly kind: 'path'; readonly of: string; readonly default: null }
  | { readonly kind: 'integer'; readonly min: number; readonly max: number; readonly default: number }
  /** On or off; on the command line a bare flag, or =true / =false (an MCP Bundle's argument template). */
  | { readonly kind: 'switch'; readonly default: false }
  | { readonly kind: 'choice'; readonly choices: readonly string[]; readonly default: string }
  /** Dollars over 0 in whole micro-dollars (what the ledger keeps exactly); null (the default): none. */
  | { readonly kind: 'dollars'; readonly max: number; readonly default: null };

export type OptionKind = OptionRule['kind'];

export interface ServerOption {
  readonly flag: `--${string}`;
  /** The value's name in the help (PATH, N); null for a switch. */
  readonly valueName: string | null;
  readonly rule: OptionRule;
  /** createClaudeRunAdapter takes it under the same key (the frame bound is the stdio transport's own). */
  readonly library: boolean;
  /** The help's lines for it, after the flag column. */
  readonly help: readonly string[];
  /** Offered by manifest.json's user_config (under the snake_case key) and by server.json's packageArguments. */
  readonly published: boolean;
  /** The MCP Bundle's own default, where it differs from the server's. */
  readonly bundleDefault?: boolean;
  /** The MCP Bundle asks for it before the server can start. */
  readonly bundleRequired?: boolean;
}

export const SERVER_OPTIONS = {
  /** The Claude Code binary; null: CLAUDE_BIN, then `claude` on PATH. */
  claudeBin: {
    flag: '--claude-bin',
    valueName: 'PATH',
    rule: { kind: 'path', of: 'the Claude Code binary', default: null },
    library: true,
    help: ['Claude Code binary to run (default: CLAUDE_BIN, then PATH)'],
    published: true,
    // Claude Desktop starts servers with a short PATH, so the bundle asks for the binary.
    bundleRequired: true,
  },
  /** The largest timeout_seconds a call may ask for. */
  maxTimeoutSeconds: {
    flag: '--max-timeout-seconds',
    valueName: 'N',
    rule: { kind: 'integer', min: 1, max: MAX_TIMEOUT_SECONDS_LIMIT, default: DEFAULT_MAX_TIMEOUT_SECONDS },
    library: true,
    help: [`largest accepted timeout_seconds, 1 to ${MAX_TIMEOUT_SECONDS_LIMIT} (default ${DEFAULT_MAX_TIMEOUT_SECONDS})`],
    published: true,
  },
  /** The largest open_idle_seconds an open run (keep_open) may ask for: how long it may wait, idle, between turns. */
  maxOpenIdleSeconds: {
    flag: '--max-open-idle-seconds',
    valueName: 'N',
    rule: { kind: 'integer', min: 1, max: MAX_TIMEOUT_SECONDS_LIMIT, default: DEFAULT_MAX_OPEN_IDLE_SECONDS },
    library: true,
    help: [
      `largest open_idle_seconds an open run (keep_open) may wait between turns, 1 to ${MAX_TIMEOUT_SECONDS_LIMIT}`,
      `(default ${DEFAULT_MAX_OPEN_IDLE_SECONDS})`,
    ],
    published: true,
  },
  /** List the tools as claude_run etc. instead of claude.run. */
  underscoreNames: {
    flag: '--underscore-names',
    valueName: null,
    rule: { kind: 'switch', default: false },
    library: true,
    help: ['list tools with underscores (claude_run) instead of dots (claude.run)'],
    published: true,
    // Claude Desktop gets names without dots by default.
    bundleDefault: true,
  },
  /** Hand the prompt to the native process on stdin rather than in argv. */
  promptViaStdin: {
    flag: '--prompt-via-stdin',
    valueName: null,
    rule: { kind: 'switch', default: false },
    library: true,
    help: ['pass the prompt to claude on stdin instead of argv', '(both also take =true or =false)'],
    published: true,
    bundleDefault: true,
  },
  /** The inbound JSON-RPC frame bound of the stdio transport. */
  maxFrameBytes: {
    flag: '--max-frame-bytes',
    valueName: 'N',
    rule: { kind: 'integer', min: MIN_FRAME_BYTES, max: MAX_FRAME_BYTES_LIMIT, default: MAX_FRAME_BYTES },
    library: false,
    help: [`inbound JSON-RPC frame bound in bytes, ${MIN_FRAME_BYTES} to ${MAX_FRAME_BYTES_LIMIT} (default ${MAX_FRAME_BYTES})`],
    published: false,
  },
  /** How each run's cleanup is proven (docs/supervisor.md). */
  cleanupBackend: {
    flag: '--cleanup-backend',
    valueName: 'B',
    rule: { kind: 'choice', choices: CLEANUP_BACKEND_OPTIONS, default: 'auto' },
    library: true,
    help: [
      'how cleanup is proven: auto (a cgroup per run where one can be had, else /proc',
      'scans; on macOS ps_scan; the default), cgroup (refuse to start without one),',
      'process_scan, ps_scan (the portable source: the system ps and signals only)',
    ],
    published: false,
  },
  /** The cap on the total reported cost of the runs this server starts; null: no budget. */
  budgetUsd: {
    flag: '--budget-usd',
    valueName: 'N',
    rule: { kind: 'dollars', max: MAX_BUDGET_USD_LIMIT, default: null },
    library: true,
    help: [
      'cap the total reported cost of the runs this server starts, in dollars with up',
      `to 6 decimals, up to ${MAX_BUDGET_USD_LIMIT}; each run gets --max-budget-usd = what remains`,
      '(0 or empty: no budget, the default)',
    ],
    published: true,
  },
  /** Where the runs' records are kept for a later server (docs/tools.md, "Across a restart"); null: the platform's default. */
  stateDir: {
    flag: '--state-dir',
    valueName: 'PATH',
    rule: { kind: 'path', of: 'the state directory', default: null },
    library: true,
    help: [
      "directory for the runs' records, private (0700), so a later server can answer",
      'for them (default: $XDG_STATE_HOME or ~/.local/state on Linux, ~/Library/Application',
      'Support on macOS, then claude-run-mcp)',
    ],
    published: false,
  },
} as const satisfies Record<string, ServerOption>;

export type OptionKey = keyof typeof SERVER_OPTIONS;
type Options = typeof SERVER_OPTIONS;

/** The keys in the table's order (the help's, manifest.json's and server.json's). */
export const OPTION_KEYS = Object.keys(SERVER_OPTIONS).filter(isOptionKey);

function isOptionKey(key: string): key is OptionKey {
  return Object.hasOwn(SERVER_OPTIONS, key);
}

type ValueOf<R> = R extends { readonly kind: 'path' }
  ? string | null
  : R extends { readonly kind: 'integer' }
    ? number
    : R extends { readonly kind: 'switch' }
      ? boolean
      : R extends { readonly kind: 'choice'; readonly choices: readonly (infer C)[] }
        ? C
        : R extends { readonly kind: 'dollars' }
          ? number | null
          : never;

/** Every option with its value (its default where none was given): what `serve` runs with. */
export type ServeConfig = { readonly [K in OptionKey]: ValueOf<Options[K]['rule']> };

/** The options the library takes, each optional; the defaults are the server's. */
export type LibraryServerOptions = {
  readonly [K in OptionKey as Options[K]['library'] extends true ? K : never]?: NonNullable<ValueOf<Options[K]['rule']>>;
};

/** A value that fails its option's rule. Never carries the value. */
export interface OptionProblem {
  readonly code: 'invalid_option_value';
  readonly key: OptionKey;
  /** JSON Pointer of the option (its library key). */
  readonly path: string;
  /** What a valid value is, as the library says it ("an integer from 1 to 86400"). */
  readonly expected: string;
  /** A number out of its range (RangeError in the library) rather than a value of the wrong kind (TypeError). */
  readonly range: boolean;
}

export type OptionsCheck =
  { readonly kind: 'config'; readonly config: ServeConfig } | { readonly kind: 'error'; readonly problem: OptionProblem };

/** The one validator: every given value against its rule, in the table's order; undefined means not given. */
export function checkServerOptions(given: Readonly<Partial<Record<OptionKey, unknown>>>): OptionsCheck {
  const failing = OPTION_KEYS.find((key) => given[key] !== undefined && !meetsRule(SERVER_OPTIONS[key].rule, given[key]));
  if (failing !== undefined) return { kind: 'error', problem: problemOf(failing) };
  const o = SERVER_OPTIONS;
  // Every given value met its rule just above; the guards here only carry that to the types.
  const config: ServeConfig = {
    claudeBin: valueOr(given.claudeBin, isString, o.claudeBin.rule.default),
    maxTimeoutSeconds: valueOr(given.maxTimeoutSeconds, isNumber, o.maxTimeoutSeconds.rule.default),
    maxOpenIdleSeconds: valueOr(given.maxOpenIdleSeconds, isNumber, o.maxOpenIdleSeconds.rule.default),
    underscoreNames: valueOr(given.underscoreNames, isBoolean, o.underscoreNames.rule.default),
    promptViaStdin: valueOr(given.promptViaStdin, isBoolean, o.promptViaStdin.rule.default),
    maxFrameBytes: valueOr(given.maxFrameBytes, isNumber, o.maxFrameBytes.rule.default),
    cleanupBackend: valueOr(given.cleanupBackend, isOneOf(o.cleanupBackend.rule.choices), o.cleanupBackend.rule.default),
    budgetUsd: valueOr(given.budgetUsd, isNumber, o.budgetUsd.rule.default),
    stateDir: valueOr(given.stateDir, isString, o.stateDir.rule.default),
  };
  return { kind: 'config', config };
}

/** The library's face of the validator: only the options the library takes are read (others are not its own). */
export function checkLibraryOptions(options: LibraryServerOptions): OptionsCheck {
  const record: Readonly<Record<string, unknown>> = options;
  const given: Partial<Record<OptionKey, unknown>> = {};
  for (const key of OPTION_KEYS) if (SERVER_OPTIONS[key].library) given[key] = record[key];
  return checkServerOptions(given);
}

/** Whether a value meets an option's rule. */
export function meetsRule(rule: OptionRule, value: unknown): boolean {
  switch (rule.kind) {
    case 'path':
      return isString(value) && value !== '' && !value.includes('\0');
    case 'integer':
      return isNumber(value) && Number.isInteger(value) && value >= rule.min && value <= rule.max;
    case 'switch':
      return isBoolean(value);
    case 'choice':
      return isOneOf(rule.choices)(value);
    case 'dollars':
      return isNumber(value) && value > 0 && value <= rule.max && isWholeMicroDollars(value);
    default:
      return assertNever(rule);
  }
}

/** What a valid value of a rule is, in words. */
export function describeRule(rule: OptionRule): string {
  switch (rule.kind) {
    case 'path':
      return `a path to ${rule.of}`;
    case 'integer':
      return `an integer from ${rule.min} to ${rule.max}`;
    case 'switch':
      return 'true or false';
    case 'choice':
      return `one of ${rule.choices.join(', ')}`;
    case 'dollars':
      return `a number over 0 and up to ${rule.max}, with at most 6 decimals`;
    default:
      return assertNever(rule);
  }
}

export function problemOf(key: OptionKey): OptionProblem {
  const rule: OptionRule = SERVER_OPTIONS[key].rule;
  return {
    code: 'invalid_option_value',
    key,
    path: `/${key}`,
    expected: describeRule(rule),
    range: rule.kind === 'integer' || rule.kind === 'dollars',
  };
}

/** The manifest.json user_config key of an option: its library key in snake_case. */
export function toUserConfigKey(key: OptionKey): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

function isWholeMicroDollars(value: number): boolean {
  return Math.abs(value * 1e6 - Math.round(value * 1e6)) < 1e-6;
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isNumber = (value: unknown): value is number => typeof value === 'number';
const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean';
const isOneOf =
  <C extends string>(choices: readonly C[]) =>
  (value: unknown): value is C =>
    choices.some((choice) => choice === value);
const valueOr = <T, D>(value: unknown, guard: (value: unknown) => value is T, fallback: D): T | D => (guard(value) ? value : fallback);
