/**
 * A pure reader of one `strace -f -y -s N -o FILE` trace (every traced thread in one file): each system call
 * becomes one record with its thread id, name, arguments (split at top-level commas, kept as printed) and
 * result. A call printed in two parts ("<unfinished ...>", then "<... name resumed>") is joined; one never
 * resumed (its thread ended inside it) keeps its arguments with a null result. A line this reader cannot read
 * is returned, never dropped: a checker that skipped it could miss an access.
 */

export interface Syscall {
  /** The 1-based line of the call's entry (its only line, or its "<unfinished ...>" line). */
  readonly line: number;
  readonly tid: number;
  readonly name: string;
  /** Each argument as strace printed it (a quoted string, a flag set, `3</path>`, an array, …). */
  readonly args: readonly string[];
  /** What follows ` = ` (`0`, `3</proc/meminfo>`, `-1 ENOENT (No such file or directory)`), null if never resumed. */
  readonly result: string | null;
}

export interface UnreadLine {
  readonly line: number;
  readonly text: string;
}

export interface ParsedTrace {
  readonly calls: readonly Syscall[];
  readonly unread: readonly UnreadLine[];
}

const UNFINISHED = ' <unfinished ...>';
// The thread id, padded with spaces where strace pads it (to the width of the largest possible pid).
/** Notices that carry no access: a thread's exit or death, a signal delivered, an exec replacing a thread. */
const NOTICE = /^\d+ +(?:\+\+\+ .* \+\+\+|--- .* ---)$/;
const ENTRY = /^(\d+) +([a-z_0-9]+)\((.*)$/;
const RESUMED = /^(\d+) +<\.\.\. ([a-z_0-9]+) resumed>(.*)$/;

/** Parses a whole trace; the calls come in the order of their entry lines. */
export function parseStrace(text: string): ParsedTrace {
  const calls: (Syscall & { readonly order: number })[] = [];
  const unread: UnreadLine[] = [];
  const pending = new Map<number, { line: number; name: string; head: string }>();
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (NOTICE.test(raw)) return;
    const resumed = RESUMED.exec(raw);
    if (resumed !== null) {
      const tid = Number(resumed[1]);
      const open = pending.get(tid);
      if (open === undefined || open.name !== resumed[2]) return void unread.push({ line, text: raw });
      pending.delete(tid);
      const call = readCall(tid, open.name, open.head + (resumed[3] ?? ''), open.line);
      return void (call === null ? unread.push({ line, text: raw }) : calls.push({ ...call, order: open.line }));
    }
    const entry = ENTRY.exec(raw);
    if (entry === null) return void unread.push({ line, text: raw });
    const tid = Number(entry[1]);
    const name = entry[2] ?? '';
    const rest = entry[3] ?? '';
    if (rest.endsWith(UNFINISHED)) {
      if (pending.has(tid)) unread.push({ line, text: raw });
      pending.set(tid, { line, name, head: rest.slice(0, -UNFINISHED.length) });
      return;
    }
    const call = readCall(tid, name, rest, line);
    if (call === null) unread.push({ line, text: raw });
    else calls.push({ ...call, order: line });
  });
  // A call never resumed: its arguments were printed at entry, so they still count.
  for (const [tid, open] of pending)
    calls.push({ line: open.line, tid, name: open.name, args: splitArgs(open.head), result: null, order: open.line });
  calls.sort((a, b) => a.order - b.order);
  return { calls: calls.map(({ order: _order, ...call }) => call), unread };
}

/** `body` is everything after `name(`: the arguments, `)`, ` = ` and the result. */
function readCall(tid: number, name: string, body: string, line: number): Syscall | null {
  const close = closingParen(body);
  if (close < 0) return null;
  const after = body.slice(close + 1);
  const result = /^ += (.*)$/.exec(after);
  if (result === null) return null;
  return { line, tid, name, args: splitArgs(body.slice(0, close)), result: result[1] ?? '' };
}

/**
 * Scans printed arguments outside quoted strings and `<…>` fd paths (strace escapes `"` and `>` inside them):
 * calls `atDepth0` with each index at nesting depth zero. Returns the index where `stop` said to stop, or -1.
 */
function scan(text: string, atDepth0: (i: number, ch: string) => boolean): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? '';
    if (ch === '"' || ch === '<') {
      const end = ch === '"' ? '"' : '>';
      for (i++; i < text.length && text[i] !== end; i++) if (text[i] === '\\') i++;
      continue;
    }
    if (depth === 0 && atDepth0(i, ch)) return i;
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth--;
  }
  return -1;
}

function closingParen(body: string): number {
  return scan(body, (_i, ch) => ch === ')');
}

/** Splits an argument list at its top-level `, `. */
export function splitArgs(text: string): string[] {
  const args: string[] = [];
  let start = 0;
  scan(text, (i, ch) => {
    if (ch === ',') {
      args.push(text.slice(start, i).trim());
      start = i + 1;
    }
    return false;
  });
  const last = text.slice(start).trim();
  if (last !== '' || args.length > 0) args.push(last);
  return args;
}

const ESCAPES: Readonly<Record<string, string>> = { 'n': '\n', 't': '\t', 'r': '\r', 'v': '\v', 'f': '\f', '\\': '\\', '"': '"' };

/** The bytes of a C-escaped string body as strace prints them (`\ooo`, `\xHH`, `\n`, …), read as latin1. */
function unescape(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)/g, (_m, code: string) => {
    if (code.startsWith('x') && code.length === 3) return String.fromCharCode(parseInt(code.slice(1), 16));
    if (/^[0-7]+$/.test(code)) return String.fromCharCode(parseInt(code, 8));
    return ESCAPES[code] ?? code;
  });
}

/** A printed string argument: its value, and whether strace cut it (`"…"...`); null if it is not a string. */
export function readString(arg: string): { readonly value: string; readonly cut: boolean } | null {
  const match = /^"((?:[^"\\]|\\.)*)"(\.\.\.)?$/.exec(arg);
  return match === null ? null : { value: unescape(match[1] ?? ''), cut: match[2] !== undefined };
}

/** A printed array of strings (execve's argv); null if it is not one or strace cut it. */
export function readStringArray(arg: string): string[] | null {
  if (!arg.startsWith('[') || !arg.endsWith(']')) return null;
  const items = splitArgs(arg.slice(1, -1));
  const values = items.map(readString);
  return values.every((v) => v !== null && !v.cut) ? values.map((v) => v?.value ?? '') : null;
}

/** A printed descriptor with `-y`: `AT_FDCWD</dir>`, `3</path>`, or bare when strace could not name it. */
export function readFd(arg: string): { readonly fd: string; readonly path: string | null } | null {
  const match = /^(AT_FDCWD|-?\d+)(?:<((?:[^>\\]|\\.)*)>)?$/.exec(arg);
  if (match === null) return null;
  return { fd: match[1] ?? '', path: match[2] === undefined ? null : unescape(match[2]) };
}

/** The integer a call returned (a pid from clone, 0 from execve), or null (`?`, an error, a decorated fd). */
export function resultNumber(result: string | null): number | null {
  const match = result === null ? null : /^(-?\d+)$/.exec(result.trim());
  return match === null ? null : Number(match[1]);
}
