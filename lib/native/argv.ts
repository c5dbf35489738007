/**
 * Structured options in, exact native argv out. Pure.
 * Shape: print mode, output-mode flags, input flags, supplied options in tree order. The prompt never
 * appears in argv: it is written to stdin as the tree declares for the output mode (cli-tree.json `input`).
 */
import { isUuid } from '../util/uuid.ts';
import { findSchemaProblem } from './json-schema-check.ts';
import { ToolError } from '../tool-errors.ts';
import { assertNever } from '../util/assert-never.ts';
import type { CliOption, CliTree, OutputMode } from './tree.ts';
import type { JsonValue } from '../util/json.ts';
import { escapePointerToken } from '../util/json-pointer.ts';
import type { PermissionMode } from './tree.ts';
import { interruptLine, userMessageLine as userLine } from './control.ts';

export interface NativeArgvInput {
  readonly tree: CliTree;
  readonly outputMode: OutputMode;
  /** Always emitted (the one value the adapter supplies itself). */
  readonly permissionMode: PermissionMode;
  /** Native options keyed by the tree's `arg`; only supplied ones. `permission_mode` here must equal permissionMode. */
  readonly options: Readonly<Record<string, JsonValue>>;
  readonly prompt: string;
}

export interface NativeArgv {
  readonly args: string[];
  /** What is written to the native's stdin first: the prompt, as one user line or as bare text. */
  readonly stdin: string;
  /** stream-json input: stdin stays open after the prompt (control answers, further turns) until ended. */
  readonly streamInput: boolean;
}

/** The native's interrupt control request (newline included): ends the running turn, the process stays. */
export function interruptRequestLine(requestId: string): string {
  return `${interruptLine(requestId)}\n`;
}

/** One stream-json `user` message line (newline included), as the native reads it on stdin. */
/**
 * The largest user line a prompt may become. It travels inside the supervisor's spawn line, JSON-encoded once
 * more (each `"` and `\\` doubled, the rest kept), which must stay within CONTROL_LINE_MAX_BYTES (32 MiB).
 */
export const MAX_USER_LINE_BYTES = 15 * 1024 * 1024;

export function userMessageLine(text: string): string {
  return `${userLine(text)}\n`;
}

/** Builds the exact argv; throws ToolError('invalid_arguments', …, '/<arg>') for anything undeclared or malformed. */
export function buildNativeArgv(input: NativeArgvInput): NativeArgv {
  const { tree } = input;
  checkPrompt(input.prompt);
  for (const key of Object.keys(input.options)) {
    if (!tree.options.some((o) => o.arg === key))
      throw new ToolError('invalid_arguments', `${key} is not a declared native option`, pointer(key));
  }
  const optionArgs: string[] = [];
  for (const option of tree.options) {
    const supplied = Object.hasOwn(input.options, option.arg) ? input.options[option.arg] : undefined;
    if (option.arg === 'permission_mode') {
      if (supplied !== undefined && supplied !== input.permissionMode) {
        throw new ToolError('invalid_arguments', 'permission_mode in options disagrees with the permission mode', pointer(option.arg));
      }
      optionArgs.push(...emitOption(tree, option, input.permissionMode));
    } else if (supplied !== undefined) {
      optionArgs.push(...emitOption(tree, option, supplied));
    }
  }
  const delivery = tree.input[input.outputMode];
  const args = [...tree.print_mode, ...tree.output_modes[input.outputMode], ...delivery.args, ...optionArgs];
  switch (delivery.prompt) {
    case 'user_line': {
      const line = userMessageLine(input.prompt);
      if (Buffer.byteLength(line, 'utf8') > MAX_USER_LINE_BYTES)
        throw new ToolError(
          'invalid_arguments',
          `prompt must encode to at most ${MAX_USER_LINE_BYTES} bytes as the native's stdin line`,
          '/prompt',
        );
      return { args, stdin: line, streamInput: true };
    }
    case 'text':
      return { args, stdin: input.prompt, streamInput: false };
    default:
      return assertNever(delivery.prompt);
  }
}

function checkPrompt(prompt: string): void {
  if (prompt.length === 0) throw new ToolError('invalid_arguments', 'prompt must not be empty', '/prompt');
  if (prompt.includes('\0')) throw new ToolError('invalid_arguments', 'prompt must not contain NUL bytes', '/prompt');
}

/** The argv tokens for one supplied option value. */
function emitOption(tree: CliTree, option: CliOption, value: JsonValue): string[] {
  const path = pointer(option.arg);
  switch (option.value) {
    case 'none':
      if (typeof value !== 'boolean') throw invalid(path, 'must be a boolean');
      return value ? [option.flag] : [];
    case 'string': {
      const text = checkText(value, path, tree.limits.max_string_chars);
      if (option.pattern !== undefined && !new RegExp(option.pattern, 'u').test(text)) throw invalid(path, `must match ${option.pattern}`);
      return [option.flag, text];
    }
    case 'uuid': {
      const text = checkText(value, path, tree.limits.max_string_chars);
      if (!isUuid(text)) throw invalid(path, 'must be a UUID');
      return [option.flag, text];
    }
    case 'enum':
      if (typeof value !== 'string' || !option.choices.includes(value)) throw invalid(path, `must be one of: ${option.choices.join(', ')}`);
      return [option.flag, value];
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(path, 'must be a finite number');
      if (option.value === 'integer' && !Number.isInteger(value)) throw invalid(path, 'must be an integer');
      // Past 2^53-1 an integer has no exact decimal form, and from 1e21 String() writes an exponent that the
      // native parser reads as another number (`--max-turns 1e+21` is 1 turn).
      if (option.value === 'integer' && !Number.isSafeInteger(value)) throw invalid(path, `must be at most ${Number.MAX_SAFE_INTEGER}`);
      if (option.maximum !== undefined && value > option.maximum) throw invalid(path, `must be at most ${option.maximum}`);
      if (option.minimum !== undefined && value < option.minimum) throw invalid(path, `must be at least ${option.minimum}`);
      if (option.exclusive_minimum !== undefined && value <= option.exclusive_minimum)
        throw invalid(path, `must be greater than ${option.exclusive_minimum}`);
      return [option.flag, String(value)];
    }
    case 'json_schema': {
      const found = findSchemaProblem(value);
      if (found !== null) throw invalid(`${path}${found.pointer}`, found.message);
      // Serialized it is one argv element: bounded like a string option, in code points.
      const text = JSON.stringify(value);
      if (codePoints(text, tree.limits.max_string_chars) > tree.limits.max_string_chars)
        throw invalid(path, `must serialize to at most ${tree.limits.max_string_chars} characters of JSON`);
      return [option.flag, text];
    }
    case 'list': {
      if (!Array.isArray(value)) throw invalid(path, 'must be an array of strings');
      if (value.length > tree.limits.max_list_items) throw invalid(path, `must have at most ${tree.limits.max_list_items} items`);
      // One flag per item: equivalent natively to the variadic form, and immune to item splitting.
      return value.flatMap((item, i) => [option.flag, checkText(item, `${path}/${i}`, tree.limits.max_list_item_chars)]);
    }
    default:
      return assertNever(option);
  }
}

function checkText(value: JsonValue, path: string, maxChars: number): string {
  if (typeof value !== 'string') throw invalid(path, 'must be a string');
  if (value.length === 0) throw invalid(path, 'must not be empty');
  // Option values come before `--`, so a leading '-' would be parsed as a flag.
  if (value.startsWith('-')) throw invalid(path, 'must not start with "-"');
  if (value.includes('\0')) throw invalid(path, 'must not contain NUL bytes');
  if (codePoints(value, maxChars) > maxChars) throw invalid(path, `must be at most ${maxChars} characters`);
  return value;
}

function codePoints(text: string, stopAfter: number): number {
  if (text.length <= stopAfter) return text.length; // UTF-16 units bound code points from above
  let count = 0;
  for (const _ of text) if (++count > stopAfter) break;
  return count;
}

function invalid(path: string, message: string): ToolError {
  return new ToolError('invalid_arguments', `${path.slice(1)} ${message}`, path);
}

/** JSON Pointer of one top-level argument (RFC 6901 escaping). */
function pointer(key: string): string {
  return `/${escapePointerToken(key)}`;
}
