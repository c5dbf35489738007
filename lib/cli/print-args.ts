/**
 * The command line of `claude-run-mcp print`, pure: argv in, tool arguments (or help, or a usage error that
 * names the flag the user typed) out. Flags are the native spellings declared in cli-tree.json plus --cwd,
 * --timeout-seconds and --claude-bin; the prompt is everything after `--`.
 */
import { assertNever } from '../util/assert-never.ts';
import { DEFAULT_MAX_TIMEOUT_SECONDS } from './server-options.ts';
import { DEFAULT_TIMEOUT_SECONDS } from '../tools/run-input.ts';
import { ToolError } from '../tool-errors.ts';
import type { CliTree } from '../native/tree.ts';
import type { JsonValue } from '../util/json.ts';

export type PrintArgs =
  | { readonly kind: 'run'; readonly args: Readonly<Record<string, JsonValue>>; readonly claudeBin: string | null }
  | { readonly kind: 'help' };

/** Flags that print adds to the declared native ones, keyed by the tool argument they fill. */
const OWN_FLAGS = { cwd: '--cwd', timeout_seconds: '--timeout-seconds' } as const;
const HELP_HINT = 'claude-run-mcp print --help lists the options';
/** A flag name quoted back in an error is cut here, so a pasted blob does not fill the terminal. */
const MAX_QUOTED_FLAG_CHARS = 64;

export function getPrintUsage(tree: CliTree): string {
  const rows: [string, string][] = [];
  for (const option of tree.options) {
    const value =
      option.value === 'enum'
        ? ` ${option.choices.join('|')}`
        : option.value === 'none'
          ? ''
          : option.value === 'list'
            ? ' VALUE (repeatable)'
            : ` ${option.value.toUpperCase()}`;
    rows.push([`${option.flag}${value}`, `${option.arg === 'permission_mode' ? '(required) ' : ''}${option.description}`]);
  }
  rows.push(['--cwd DIR', 'working directory of the run (default: the current directory)']);
  rows.push([
    '--timeout-seconds N',
    `wall-clock bound of the run, 1 to ${DEFAULT_MAX_TIMEOUT_SECONDS} (default ${DEFAULT_TIMEOUT_SECONDS})`,
  ]);
  rows.push(['--claude-bin PATH', 'Claude Code binary (default: CLAUDE_BIN, then claude on PATH)']);
  rows.push(['-h, --help', 'print this help']);
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  return [
    'usage: claude-run-mcp print --permission-mode MODE [options] -- PROMPT',
    '',
    'Runs one prompt through Claude Code (`claude -p --output-format json`) with the same version check and',
    'supervisor as the MCP tools, and prints the native JSON result unchanged on stdout. Exit 0 on native',
    'success; 1 when the run failed (one JSON line {"code","message"} on stderr); 2 for usage errors.',
    '',
    'options:',
    ...rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`),
  ].join('\n');
}

/** Maps argv to tool arguments; throws ToolError('invalid_arguments') whose message names the flag. */
export function parsePrintArgs(argv: readonly string[], tree: CliTree): PrintArgs {
  const args: Record<string, JsonValue> = {};
  let claudeBin: string | null = null;
  const knownFlags = new Set<string>([...tree.options.map((o) => o.flag), ...Object.values(OWN_FLAGS), '--claude-bin', '--help', '-h']);
  let i = 0;
  while (i < argv.length) {
    const token = argv[i]!;
    if (token === '--') {
      args['prompt'] = argv.slice(i + 1).join(' ');
      break;
    }
    if (token === '--help' || token === '-h') return { kind: 'help' };
    if (!token.startsWith('-')) throw usage(`the prompt goes after --: claude-run-mcp print [options] -- PROMPT`);
    const eq = token.startsWith('--') ? token.indexOf('=') : -1;
    const flag = eq === -1 ? token : token.slice(0, eq);
    const inline = eq === -1 ? undefined : token.slice(eq + 1);
    i += 1;
    const value = (what: string): string => {
      if (inline !== undefined) {
        if (inline === '') throw usage(`${flag} needs ${what}`);
        return inline;
      }
      const next = argv[i];
      // `--` starts the prompt and a declared flag starts the next option: neither is ever a value.
      if (next === undefined || next === '--' || knownFlags.has(next))
        throw usage(
          `${flag} needs ${what}${next === undefined ? '' : ` before ${next === '--' ? 'the -- that starts the prompt' : next}`}`,
        );
      i += 1;
      return next;
    };
    if (flag === OWN_FLAGS.cwd) {
      args['cwd'] = value('a directory');
      continue;
    }
    if (flag === '--claude-bin') {
      claudeBin = value('a path');
      continue;
    }
    if (flag === OWN_FLAGS.timeout_seconds) {
      args['timeout_seconds'] = toNumber(value('a number of seconds'), flag);
      continue;
    }
    const option = tree.options.find((o) => o.flag === flag);
    if (option === undefined) throw usage(`unknown option ${quoteFlag(flag)} (${HELP_HINT})`);
    takeNativeOption(args, option, flag, inline, value);
  }
  checkComplete(args, tree);
  return { kind: 'run', args, claudeBin };
}

/** Takes one declared native option (and its value, when it has one) into the tool arguments. */
function takeNativeOption(
  args: Record<string, JsonValue>,
  option: CliTree['options'][number],
  flag: string,
  inline: string | undefined,
  value: (what: string) => string,
): void {
  switch (option.value) {
    case 'none':
      if (inline !== undefined) throw usage(`${flag} takes no value`);
      args[option.arg] = true;
      break;
    case 'list': {
      const list = (args[option.arg] as JsonValue[] | undefined) ?? [];
      list.push(value('a value'));
      args[option.arg] = list;
      break;
    }
    case 'number':
    case 'integer':
      args[option.arg] = toNumber(value('a number'), flag);
      break;
    case 'uuid':
      args[option.arg] = value('a session UUID');
      break;
    case 'enum':
      args[option.arg] = value(`one of ${option.choices.join(', ')}`);
      break;
    case 'string':
      args[option.arg] = value('a value');
      break;
    case 'json_schema':
      args[option.arg] = toJson(value('a JSON Schema object'), flag);
      break;
    default:
      assertNever(option);
  }
}

/** What a print run cannot go without: a permission mode (no default here) and a prompt. */
function checkComplete(args: Readonly<Record<string, JsonValue>>, tree: CliTree): void {
  if (typeof args['permission_mode'] !== 'string') {
    const modes = tree.options.find((o) => o.arg === 'permission_mode');
    throw usage(
      `--permission-mode is required for print (no default here): ${modes?.value === 'enum' ? modes.choices.join(', ') : 'see print --help'}`,
    );
  }
  if (typeof args['prompt'] !== 'string' || args['prompt'] === '')
    throw usage('a prompt is required after --: claude-run-mcp print [options] -- PROMPT');
}

/**
 * Rewrites a validation message about tool arguments into one about flags: each declared argument name in
 * it becomes its flag (`cwd must …` → `--cwd must …`); a message naming none is prefixed with the flag of
 * its JSON path. Messages are the adapter's own and never contain submitted values, so nothing is echoed.
 */
export function toFlagMessage(message: string, path: string | undefined, tree: CliTree): string {
  const flags = new Map<string, string>(tree.options.map((o) => [o.arg, o.flag]));
  for (const [arg, flag] of Object.entries(OWN_FLAGS)) flags.set(arg, flag);
  flags.set('prompt', 'the prompt after --');
  let named = false;
  const rewritten = message.replace(/\b[a-z][a-z_]*\b/g, (word) => {
    const flag = flags.get(word);
    if (flag === undefined) return word;
    named = true;
    return flag;
  });
  if (named) return rewritten;
  const first = path?.split('/')[1];
  const flag = first === undefined ? undefined : flags.get(first);
  return flag === undefined ? rewritten : `${flag}: ${rewritten}`;
}

function toJson(text: string, flag: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw usage(`${flag} needs JSON (a JSON Schema object)`);
  }
}

function toNumber(text: string, flag: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw usage(`${flag} needs a number`);
  return value;
}

function quoteFlag(flag: string): string {
  return flag.length > MAX_QUOTED_FLAG_CHARS ? `${flag.slice(0, MAX_QUOTED_FLAG_CHARS)}…` : flag;
}

function usage(message: string): ToolError {
  return new ToolError('invalid_arguments', message);
}
