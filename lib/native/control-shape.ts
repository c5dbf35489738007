/**
 * cli-tree.json `stdin_channel`: the native's control protocol as declared (flags and message shapes), its
 * structural validation, and the one rule a real line is checked against its declared shape by.
 */

/** The lines the native writes on its stdout that this package reads. */
export const NATIVE_WRITES = ['can_use_tool', 'interrupt_ack'] as const;
export type NativeWrite = (typeof NATIVE_WRITES)[number];
/** The lines this package writes on the native's stdin. */
export const NATIVE_READS = ['user', 'allow', 'deny', 'error', 'interrupt'] as const;
export type NativeRead = (typeof NATIVE_READS)[number];

/**
 * A message shape: constants match exactly; a string `<string:name>`, `<object:name>` or `<array:name>`
 * stands for any value of that type.
 */
export type ControlShape = string | number | boolean | null | readonly ControlShape[] | { readonly [key: string]: ControlShape };

export interface StdinChannel {
  /**
   * A flag and its value, emitted together, for a run that asks its host. The channel itself is on in every
   * stream-json run (cli-tree.json `input`, `--input-format stream-json`).
   */
  readonly permission_prompt_tool: readonly [string, string];
  /** The permission modes in which an undecided tool use reaches the prompt tool. */
  readonly modes_that_ask: readonly string[];
  readonly native_writes: Readonly<Record<NativeWrite, ControlShape>>;
  readonly native_reads: Readonly<Record<NativeRead, ControlShape>>;
  readonly turns: string;
  readonly interrupt: string;
  readonly unanswered: string;
  readonly verified: string;
}

const PLACEHOLDER = /^<(string|object|array):[a-z][a-z_]*>$/;
const KEYS = [
  'permission_prompt_tool',
  'modes_that_ask',
  'native_writes',
  'native_reads',
  'turns',
  'interrupt',
  'unanswered',
  'verified',
] as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Whether `value` has the declared `shape`. Objects need every declared key; `exact` also refuses keys the
 * shape does not declare (for what this package writes; the native adds fields of its own to what it writes).
 */
export function matchesControlShape(value: unknown, shape: ControlShape, exact: boolean): boolean {
  if (typeof shape === 'string') {
    const placeholder = PLACEHOLDER.exec(shape);
    if (placeholder === null) return value === shape;
    switch (placeholder[1]) {
      case 'string':
        return typeof value === 'string';
      case 'object':
        return isObj(value);
      default:
        return Array.isArray(value);
    }
  }
  if (shape === null || typeof shape !== 'object') return value === shape;
  if (Array.isArray(shape)) {
    const items: readonly ControlShape[] = shape;
    return Array.isArray(value) && value.length === items.length && items.every((s, i) => matchesControlShape(value[i], s, exact));
  }
  if (!isObj(value)) return false;
  const declared = Object.entries(shape);
  if (exact && Object.keys(value).length !== declared.length) return false;
  return declared.every(([key, s]) => Object.hasOwn(value, key) && matchesControlShape(value[key], s, exact));
}

/** Appends every structural problem of a candidate `stdin_channel` to `p`. */
export function validateStdinChannel(value: unknown, p: string[]): void {
  const at = 'stdin_channel';
  if (!isObj(value)) {
    p.push(`${at}: must be an object`);
    return;
  }
  for (const key of Object.keys(value)) if (!(KEYS as readonly string[]).includes(key)) p.push(`${at}: unknown key "${key}"`);
  for (const key of ['permission_prompt_tool']) {
    const pair = value[key];
    if (!Array.isArray(pair) || pair.length !== 2 || !/^--[a-z][a-z-]*$/.test(String(pair[0])) || !/^[a-z][a-z-]*$/.test(String(pair[1])))
      p.push(`${at}.${key}: must be a long flag and its value`);
  }
  const modes = value['modes_that_ask'];
  if (!Array.isArray(modes) || modes.length === 0 || !modes.every((m) => typeof m === 'string' && m !== ''))
    p.push(`${at}.modes_that_ask: must be a non-empty string array`);
  validateShapes(value['native_writes'], NATIVE_WRITES, `${at}.native_writes`, p);
  validateShapes(value['native_reads'], NATIVE_READS, `${at}.native_reads`, p);
  for (const key of ['turns', 'interrupt', 'unanswered', 'verified'])
    if (typeof value[key] !== 'string' || value[key] === '') p.push(`${at}.${key}: must be a non-empty string`);
}

function validateShapes(value: unknown, names: readonly string[], at: string, p: string[]): void {
  if (!isObj(value)) {
    p.push(`${at}: must be an object`);
    return;
  }
  for (const key of Object.keys(value)) if (!names.includes(key)) p.push(`${at}: unknown key "${key}"`);
  for (const name of names) {
    const shape = value[name];
    if (!isObj(shape) || typeof shape['type'] !== 'string' || PLACEHOLDER.test(shape['type'])) {
      p.push(`${at}.${name}: must be an object with a constant type`);
      continue;
    }
    validateShape(shape, `${at}.${name}`, p);
  }
}

/** Every leaf is a JSON constant; a string that starts with '<' must be a well-formed placeholder. */
function validateShape(shape: unknown, at: string, p: string[]): void {
  if (typeof shape === 'string') {
    if (shape.startsWith('<') && !PLACEHOLDER.test(shape)) p.push(`${at}: "${shape}" is not a placeholder <string|object|array:name>`);
  } else if (Array.isArray(shape)) shape.forEach((s, i) => validateShape(s, `${at}[${i}]`, p));
  else if (isObj(shape)) for (const [key, s] of Object.entries(shape)) validateShape(s, `${at}.${key}`, p);
  else if (shape !== null && typeof shape !== 'number' && typeof shape !== 'boolean') p.push(`${at}: not a JSON value`);
}
