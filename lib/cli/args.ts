/**
 * The command line of `serve`, parsed into a typed config. Pure: argv in, config or a usage error out. The
 * options, their rules and their help are lib/cli/server-options.ts's table; this file reads their text.
 */
import { assertNever } from '../util/assert-never.ts';
import {
  checkServerOptions,
  describeRule,
  meetsRule,
  OPTION_KEYS,
  SERVER_OPTIONS,
  type OptionKey,
  type OptionRule,
  type ServeConfig,
} from './server-options.ts';

/** Where the help's descriptions start. */
const HELP_COLUMN = 29;

const optionLines = OPTION_KEYS.flatMap((key) => {
  const { flag, valueName, help } = SERVER_OPTIONS[key];
  const head = valueName === null ? flag : `${flag} ${valueName}`;
  return help.map((line, i) => `${(i === 0 ? `  ${head}` : '').padEnd(HELP_COLUMN)}${line}`);
});

/** `claude-run-mcp --help`: the commands, and the options of serve (the default command). */
export const SERVE_USAGE = `usage: claude-run-mcp [serve] [options]     serve MCP over stdio (the default command)
       claude-run-mcp print [options] -- PROMPT   run one prompt, print the native JSON result (print --help)
       claude-run-mcp check [--claude-bin PATH]  compare the installed Claude Code with cli-tree.json (check --help)
       claude-run-mcp --version                  the adapter version and the tested Claude Code version

serve options:
${optionLines.join('\n')}
${'  -h, --help'.padEnd(HELP_COLUMN)}print this help`;

export type ArgsErrorCode = 'unknown_option' | 'unknown_argument' | 'invalid_option_value';

export type ParseResult =
  | { readonly kind: 'config'; readonly config: ServeConfig }
  | { readonly kind: 'help' }
  /** path: the JSON Pointer of the option (its library key) for invalid_option_value. */
  | { readonly kind: 'error'; readonly code: ArgsErrorCode; readonly message: string; readonly path?: string };

/** A value the text of a flag cannot be (the rule's syntax failed before its range was asked). */
const INVALID = Symbol('invalid');
export function parseServeArgs(argv: readonly string[]): ParseResult {
  const given: Partial<Record<OptionKey, unknown>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    if (name === '--help' || name === '-h') return { kind: 'help' };
    const key = OPTION_KEYS.find((k) => SERVER_OPTIONS[k].flag === name);
    if (key === undefined) {
      return arg.startsWith('-')
        ? { kind: 'error', code: 'unknown_option', message: `unknown option: ${truncate(arg)}` }
        : {
            kind: 'error',
            code: 'unknown_argument',
            message: `unknown command or argument: ${truncate(arg)} (commands: serve, print, check)`,
          };
    }
    const takeValue = (): string | null => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      // `--` and other flags are never taken as a value.
      if (next === undefined || next.startsWith('--')) return null;
      i++;
      return next;
    };
    const rule: OptionRule = SERVER_OPTIONS[key].rule;
    const value = readText(rule, inline, takeValue);
    if (value === INVALID || (value !== undefined && !meetsRule(rule, value))) return invalid(key);
    given[key] = value;
  }
  const checked = checkServerOptions(given);
  return checked.kind === 'config' ? checked : invalid(checked.problem.key);
}

/**
 * The value a flag's text stands for, by its rule's syntax: a value for the validator, undefined for "not
 * given" (0 or empty dollars: no budget), or INVALID.
 */
function readText(rule: OptionRule, inline: string | undefined, takeValue: () => string | null): unknown {
  switch (rule.kind) {
    case 'switch':
      // A bare flag is on; an explicit =true/=false lets a fixed argument template set or clear it.
      if (inline === undefined) return true;
      return inline === 'true' ? true : inline === 'false' ? false : INVALID;
    case 'path':
    case 'choice':
      return takeValue() ?? INVALID;
    case 'integer': {
      const text = takeValue();
      return text !== null && /^[0-9]+$/.test(text) ? Number(text) : INVALID;
    }
    case 'dollars': {
      // Dollars as typed (`2`, `0.5`, `0.000001`); 0 or empty (an unset `.mcpb` setting) is no budget.
      const text = takeValue();
      if (text === '') return undefined;
      if (text === null || !/^[0-9]{1,7}(\.[0-9]{1,6})?$/.test(text)) return INVALID;
      return Number(text) === 0 ? undefined : Number(text);
    }
    default:
      return assertNever(rule);
  }
}

function invalid(key: OptionKey): ParseResult {
  const { flag, rule } = SERVER_OPTIONS[key];
  return { kind: 'error', code: 'invalid_option_value', path: `/${key}`, message: flagMessage(flag, rule) };
}

/** The usage error of a flag: what it needs, never what it was given. */
function flagMessage(flag: string, rule: OptionRule): string {
  switch (rule.kind) {
    case 'switch':
      return `${flag} takes no value (or exactly =true, =false)`;
    case 'dollars':
      return `${flag} needs dollars from 0 to ${rule.max} with at most 6 decimals (0: no budget)`;
    case 'path':
    case 'integer':
    case 'choice':
      return `${flag} needs ${describeRule(rule)}`;
    default:
      return assertNever(rule);
  }
}

function truncate(text: string): string {
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}
