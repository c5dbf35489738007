/**
 * Where lib/ holds state (docs/architecture.md, "State: a closure or a record"), enforced: a top-level
 * function fits on one screen, so a closure factory that would not has become a record with free functions;
 * and module-level state sits only in the files the document names as facts of the whole process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LIB = join(ROOT, 'lib');

/** The house limit for one function (docs/architecture.md): 80 lines and more do not fit on a screen. */
const MAX_FUNCTION_LINES = 79;

/** lib/'s TypeScript files, relative to lib/. */
function libFiles(): string[] {
  return (readdirSync(LIB, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) => f.endsWith('.ts')).sort();
}

const source = (file: string): string[] => readFileSync(join(LIB, file), 'utf8').split('\n');

/** A top-level function declaration, or a top-level const bound to an arrow function with a block body. */
const FUNCTION_START = /^(?:export )?(?:async )?function[ *]|^(?:export )?const \w+(?::[^=]+)? = (?:async )?\([^)]*\)(?::[^=]+)? => \{$/;

/** Each top-level function of a file (prettier-formatted: it ends at the first line that closes column 0). */
function getTopLevelFunctions(lines: readonly string[]): Array<{ line: number; name: string; lines: number }> {
  const out: Array<{ line: number; name: string; lines: number }> = [];
  for (let i = 0; i < lines.length; i++) {
    const head = lines[i] ?? '';
    if (!FUNCTION_START.test(head)) continue;
    const close = head.startsWith('export const') || head.startsWith('const') ? '};' : '}';
    let end = i + 1;
    while (end < lines.length && lines[end] !== close) end++;
    const name = /(?:function\*? ?|const )(\w+)/.exec(head)?.[1] ?? '?';
    out.push({ line: i + 1, name, lines: end - i + 1 });
  }
  return out;
}

test('every top-level function in lib/ fits on one screen: a closure factory that would not is a record', () => {
  const files = libFiles();
  const functions = files.flatMap((file) => getTopLevelFunctions(source(file)).map((f) => ({ file, ...f })));
  assert.ok(functions.length > 300, `the scan finds lib's functions (${functions.length})`);
  const long = functions.filter((f) => f.lines > MAX_FUNCTION_LINES).map((f) => `lib/${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
  assert.deepEqual(long, []);
});

test('the scan measures a function to its closing line, and a const arrow to its closing brace', () => {
  const body = (n: number): string[] => Array.from({ length: n }, () => '  x();');
  const lines = [
    'export function createA(): void {',
    ...body(MAX_FUNCTION_LINES - 2),
    '}',
    'const b = (n: number): number => {',
    ...body(MAX_FUNCTION_LINES - 1),
    '};',
    'const table = KEYS.flatMap((key) => {',
    '});',
  ];
  assert.deepEqual(getTopLevelFunctions(lines), [
    { line: 1, name: 'createA', lines: MAX_FUNCTION_LINES },
    { line: MAX_FUNCTION_LINES + 1, name: 'b', lines: MAX_FUNCTION_LINES + 1 },
  ]);
});

/** Module-level mutable state: a `let`, or a lower-case const holding a new Map, Set or WeakMap. */
const MODULE_STATE = /^(?:export )?(?:let \w+|const [a-z]\w* = new (?:Map|Set|WeakMap)\b)/;

test('module-level state only in the files docs/architecture.md names as facts of the whole process', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## State: a closure or a record'), doc.indexOf('## Follow one prompt'));
  assert.ok(section.includes('**Module state**'), 'the document has the section');
  const holders = libFiles().filter((file) => source(file).some((line) => MODULE_STATE.test(line)));
  assert.ok(holders.length > 0, 'the scan finds module state');
  const unnamed = holders.filter((file) => !section.includes(`\`${file}\``)).map((file) => relative(ROOT, join(LIB, file)));
  assert.deepEqual(unnamed, [], 'module state in a file the document does not name');
});
