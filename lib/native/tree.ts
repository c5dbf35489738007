/**
 * The pinned native contract (cli-tree.json at the package root), typed and structurally validated
 * once at load. The JSON is imported so the bundle embeds it; a malformed tree fails when this module loads:
 * at startup for print and check, and in the stdio server when its tool providers load, right after the
 * handshake could be answered (lib/cli/deferred-providers.ts): the server then exits 1.
 */
import { UUID_PATTERN } from '../util/uuid.ts';
import { validateStdinChannel, type StdinChannel } from './control-shape.ts';
import treeJson from '../../cli-tree.json' with { type: 'json' };

export const VALUE_KINDS = ['none', 'string', 'number', 'integer', 'uuid', 'enum', 'list', 'json_schema'] as const;
export type ValueKind = (typeof VALUE_KINDS)[number];
export const OUTPUT_MODES = ['json', 'stream-json'] as const;
export type OutputMode = (typeof OUTPUT_MODES)[number];
/** The permission modes a caller may choose (bypass modes are never offered). */
export const PERMISSION_MODES = ['dontAsk', 'plan', 'acceptEdits'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];
export const OPTION_SOURCES = ['help', 'verified-hidden'] as const;
export type OptionSource = (typeof OPTION_SOURCES)[number];

/** Linux MAX_ARG_STRLEN: one argv element, terminating NUL included. */
export const MAX_ARG_STRLEN_BYTES = 131072;
/** Canonical hyphenated UUID, any case (the native CLI accepts and echoes either). */
export { UUID_PATTERN };

interface OptionBase {
  readonly flag: string;
  readonly arg: string;
  readonly repeatable: boolean;
  readonly description: string;
  readonly source: OptionSource;
  /** How the option was verified on the tested version (required for source verified-hidden). */
  readonly verified?: string;
}
export type CliOption =
  | (OptionBase & { readonly value: 'none' | 'uuid' | 'list' | 'json_schema' })
  /** pattern: a stricter rule for the value (a name), a regular expression that never matches a leading '-'. */
  | (OptionBase & { readonly value: 'string'; readonly pattern?: string })
  | (OptionBase & { readonly value: 'enum'; readonly choices: readonly string[] })
  | (OptionBase & {
      readonly value: 'number' | 'integer';
      readonly minimum?: number;
      readonly exclusive_minimum?: number;
      readonly maximum?: number;
    });

export interface CliTree {
  readonly format_version: 1;
  readonly notes?: readonly string[];
  readonly native: {
    readonly package: string;
    readonly tested_version: string;
    readonly version_args: readonly string[];
    readonly version_output_pattern: string;
    readonly help_args: readonly string[];
  };
  readonly print_mode: readonly string[];
  readonly output_modes: Readonly<Record<OutputMode, readonly string[]>>;
  /**
   * How the prompt reaches the native, per output mode: always on stdin, never in argv. `user_line`: one
   * stream-json `user` line, stdin kept open for control answers and further turns; `text`: the bare text, then EOF.
   */
  readonly input: Readonly<Record<OutputMode, { readonly args: readonly string[]; readonly prompt: PromptDelivery }>>;
  readonly limits: { readonly max_string_chars: number; readonly max_list_items: number; readonly max_list_item_chars: number };
  readonly options: readonly CliOption[];
  /** The native's control protocol on its own stdin and stdout, as verified on the tested version (lib/native/control.ts). */
  readonly stdin_channel: StdinChannel;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string' && x.length > 0);
const isPosInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0;

function onlyKeys(o: Obj, allowed: readonly string[], where: string, problems: string[]): void {
  for (const key of Object.keys(o)) if (!allowed.includes(key)) problems.push(`${where}: unknown key "${key}"`);
}

export const PROMPT_DELIVERIES = ['user_line', 'text'] as const;
export type PromptDelivery = (typeof PROMPT_DELIVERIES)[number];

/** One entry per output mode: the input flags (possibly none) and how the prompt is written to stdin. */
function validateInput(input: unknown, p: string[]): void {
  if (!isObj(input)) {
    p.push('input: not an object');
    return;
  }
  onlyKeys(input, OUTPUT_MODES, 'input', p);
  for (const mode of OUTPUT_MODES) {
    const entry = input[mode];
    if (!isObj(entry)) {
      p.push(`input.${mode}: not an object`);
      continue;
    }
    onlyKeys(entry, ['args', 'prompt'], `input.${mode}`, p);
    const args = entry['args'];
    if (!(Array.isArray(args) && (args.length === 0 || (isStrings(args) && String(args[0]).startsWith('-')))))
      p.push(`input.${mode}.args: must be flags`);
    if (!PROMPT_DELIVERIES.some((d) => d === entry['prompt']))
      p.push(`input.${mode}.prompt: must be one of ${PROMPT_DELIVERIES.join(', ')}`);
    // A user line is stream-json input, which the native reads only with stream-json output.
    if (entry['prompt'] === 'user_line' && mode !== 'stream-json') p.push(`input.${mode}.prompt: user_line needs stream-json output`);
  }
}

/** Every structural problem of a candidate tree; empty means it is a valid CliTree. */
export function validateCliTree(value: unknown): string[] {
  const p: string[] = [];
  if (!isObj(value)) return ['tree: not an object'];
  onlyKeys(
    value,
    ['format_version', 'notes', 'native', 'print_mode', 'output_modes', 'input', 'limits', 'stdin_channel', 'options'],
    'tree',
    p,
  );
  validateStdinChannel(value['stdin_channel'], p);
  if (value['format_version'] !== 1) p.push('format_version: must be 1');
  if (value['notes'] !== undefined && !isStrings(value['notes'])) p.push('notes: must be strings');
  validateNative(value['native'], p);
  if (!isStrings(value['print_mode']) || value['print_mode'].length === 0) p.push('print_mode: must be a non-empty string array');
  const modes = value['output_modes'];
  if (!isObj(modes)) p.push('output_modes: not an object');
  else {
    onlyKeys(modes, OUTPUT_MODES, 'output_modes', p);
    for (const mode of OUTPUT_MODES)
      if (!isStrings(modes[mode]) || !String(modes[mode]?.[0]).startsWith('-')) p.push(`output_modes.${mode}: must be flags`);
  }
  validateInput(value['input'], p);
  const limits = value['limits'];
  if (!isObj(limits)) p.push('limits: not an object');
  else {
    onlyKeys(limits, ['max_string_chars', 'max_list_items', 'max_list_item_chars'], 'limits', p);
    for (const key of ['max_string_chars', 'max_list_items', 'max_list_item_chars'])
      if (!isPosInt(limits[key])) p.push(`limits.${key}: must be a positive integer`);
    // A code point is at most 4 UTF-8 bytes; every value must fit one argv element.
    for (const key of ['max_string_chars', 'max_list_item_chars']) {
      const chars = limits[key];
      if (isPosInt(chars) && chars * 4 >= MAX_ARG_STRLEN_BYTES)
        p.push(`limits.${key}: 4 bytes per code point must stay below ${MAX_ARG_STRLEN_BYTES}`);
    }
  }
  validateOptions(value['options'], value, p);
  return p;
}

function validateNative(native: unknown, p: string[]): void {
  if (!isObj(native)) {
    p.push('native: not an object');
    return;
  }
  onlyKeys(native, ['package', 'tested_version', 'version_args', 'version_output_pattern', 'help_args'], 'native', p);
  if (typeof native['package'] !== 'string' || native['package'] === '') p.push('native.package: must be a string');
  if (typeof native['tested_version'] !== 'string' || !/^\d+\.\d+\.\d+$/.test(native['tested_version']))
    p.push('native.tested_version: must be x.y.z');
  if (!isStrings(native['version_args']) || native['version_args'].length === 0)
    p.push('native.version_args: must be a non-empty string array');
  if (!isStrings(native['help_args']) || native['help_args'].length === 0) p.push('native.help_args: must be a non-empty string array');
  const pattern = native['version_output_pattern'];
  try {
    const re = new RegExp(String(pattern));
    const sample = `${String(native['tested_version'])} (Claude Code)`;
    if (typeof pattern !== 'string' || re.exec(sample)?.[1] !== native['tested_version'])
      p.push('native.version_output_pattern: must capture the tested version in group 1');
  } catch {
    p.push('native.version_output_pattern: not a regular expression');
  }
}

const OPTION_KEYS = [
  'flag',
  'arg',
  'value',
  'pattern',
  'choices',
  'minimum',
  'exclusive_minimum',
  'repeatable',
  'description',
  'source',
  'verified',
];

function validateOptions(options: unknown, tree: Obj, p: string[]): void {
  if (!Array.isArray(options) || options.length === 0) {
    p.push('options: must be a non-empty array');
    return;
  }
  const fixed = new Set([
    ...(isStrings(tree['print_mode']) ? tree['print_mode'] : []),
    ...Object.values(isObj(tree['output_modes']) ? tree['output_modes'] : {}).flat(),
  ]);
  const flags = new Set<string>();
  const args = new Set<string>();
  options.forEach((o, i) => {
    const at = `options[${i}]`;
    if (!isObj(o)) {
      p.push(`${at}: not an object`);
      return;
    }
    onlyKeys(o, OPTION_KEYS, at, p);
    const { flag, arg, value: kind } = o;
    if (typeof flag !== 'string' || !/^--[A-Za-z][A-Za-z-]*$/.test(flag)) p.push(`${at}.flag: must be a long flag`);
    else if (flags.has(flag) || fixed.has(flag)) p.push(`${at}.flag: ${flag} is declared twice`);
    else flags.add(flag);
    if (typeof arg !== 'string' || !/^[a-z][a-z0-9_]*$/.test(arg)) p.push(`${at}.arg: must be snake_case`);
    else if (args.has(arg)) p.push(`${at}.arg: ${arg} is declared twice`);
    else args.add(arg);
    if (!VALUE_KINDS.includes(kind as ValueKind)) p.push(`${at}.value: unknown kind`);
    if (o['repeatable'] !== (kind === 'list')) p.push(`${at}.repeatable: must be true exactly for list options`);
    if (typeof o['description'] !== 'string' || o['description'] === '' || o['description'].includes('\n'))
      p.push(`${at}.description: must be one line`);
    if (!OPTION_SOURCES.includes(o['source'] as OptionSource)) p.push(`${at}.source: must be help or verified-hidden`);
    const verified = o['verified'];
    if (verified !== undefined && (typeof verified !== 'string' || verified === '')) p.push(`${at}.verified: must be a non-empty note`);
    if (o['source'] === 'verified-hidden' && verified === undefined) p.push(`${at}.verified: required for verified-hidden options`);
    const choices = o['choices'];
    if (kind === 'enum') {
      if (!isStrings(choices) || choices.length === 0 || new Set(choices).size !== choices.length || choices.some((c) => c.startsWith('-')))
        p.push(`${at}.choices: must be unique non-empty strings`);
    } else if (choices !== undefined) p.push(`${at}.choices: only enum options have choices`);
    validatePattern(o['pattern'], kind, at, p);
    for (const bound of ['minimum', 'exclusive_minimum', 'maximum']) {
      if (o[bound] === undefined) continue;
      if (kind !== 'number' && kind !== 'integer') p.push(`${at}.${bound}: only numeric options have bounds`);
      else if (typeof o[bound] !== 'number' || !Number.isFinite(o[bound])) p.push(`${at}.${bound}: must be a finite number`);
    }
  });
  const mode = options.find((o) => isObj(o) && o['arg'] === 'permission_mode');
  const declared = isObj(mode) && isStrings(mode['choices']) ? [...mode['choices']].sort() : null;
  if (declared === null || declared.join() !== [...PERMISSION_MODES].sort().join())
    p.push(`options: permission_mode must be an enum of exactly ${PERMISSION_MODES.join(', ')}`);
}

function validatePattern(pattern: unknown, kind: unknown, at: string, p: string[]): void {
  if (pattern === undefined) return;
  if (kind !== 'string') {
    p.push(`${at}.pattern: only string options have a pattern`);
    return;
  }
  try {
    const re = new RegExp(String(pattern), 'u');
    // A value that could start with '-' would be parsed as a flag; anchors keep the whole value checked.
    if (typeof pattern !== 'string' || !pattern.startsWith('^') || !pattern.endsWith('$') || re.test('-') || re.test('-a'))
      p.push(`${at}.pattern: must be anchored and never match a leading '-'`);
  } catch {
    p.push(`${at}.pattern: not a regular expression`);
  }
}

/** Validates and narrows; throws with every problem listed. */
export function parseCliTree(value: unknown): CliTree {
  const problems = validateCliTree(value);
  if (problems.length > 0) throw new Error(`invalid cli-tree.json:\n  ${problems.join('\n  ')}`);
  return value as CliTree;
}

/** The tree this build ships with. */
export const CLI_TREE: CliTree = parseCliTree(treeJson);

/** The MCP argument names of every declared option (permission_mode included). */
export function getNativeArgNames(tree: CliTree): ReadonlySet<string> {
  return new Set(tree.options.map((o) => o.arg));
}
