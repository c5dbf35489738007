// The docs name everything the code defines: every tool, every tool error code, every native option and
// every wire error code. Enumerated from the code, so a new code or option fails here until documented.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TOOL_ERROR_CODES } from '../../lib/tool-errors.ts';
import { TOOL_NAMES, toWireName } from '../../lib/tools/declarations.ts';
import { RPC_ERROR_CODES } from '../../lib/rpc/errors.ts';
import { ALL_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/rpc/negotiate.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import { RUN_STATES } from '../../lib/runs/types.ts';

const read = (path: string): string => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');
const missing = (text: string, words: readonly string[]): string[] => words.filter((w) => !text.includes(`\`${w}\``));

const tools = read('docs/tools.md');
const protocol = read('docs/protocol.md');

test('docs/tools.md names every tool error code', () => {
  const codes = Object.keys(TOOL_ERROR_CODES);
  assert.ok(codes.length >= 38, `only ${codes.length} codes enumerated`);
  assert.deepEqual(missing(tools, codes), []);
});

test('every error code has its own row in the error tables of docs/tools.md', () => {
  const errorSection = tools.slice(tools.indexOf('## Error codes'), tools.indexOf('## Bounds'));
  const rows = Object.keys(TOOL_ERROR_CODES).filter((code) => !new RegExp(`^\\| \`${code}\` \\|`, 'm').test(errorSection));
  assert.deepEqual(rows, []);
});

test('docs/tools.md names every tool in both spellings, and has a section per tool', () => {
  assert.equal(TOOL_NAMES.length, 11);
  assert.deepEqual(missing(tools, TOOL_NAMES), []);
  assert.deepEqual(
    missing(
      tools,
      TOOL_NAMES.map((name) => toWireName(name, true)),
    ),
    [],
  );
  const sections = TOOL_NAMES.filter((name) => !tools.includes(`\n## \`${name}\`\n`));
  assert.deepEqual(sections, []);
});

test('docs/tools.md documents every native option of cli-tree.json with its flag, and every run state', () => {
  const args = CLI_TREE.options.map((o) => o.arg);
  const flags = CLI_TREE.options.map((o) => o.flag);
  assert.deepEqual(missing(tools, args), []);
  assert.deepEqual(missing(tools, flags), []);
  assert.deepEqual(missing(tools, RUN_STATES), []);
});

test('docs/protocol.md names every wire error code and every protocol date', () => {
  const codes = Object.values(RPC_ERROR_CODES).map(String);
  assert.equal(codes.length, 11);
  assert.deepEqual(missing(protocol, codes), []);
  assert.deepEqual(missing(protocol, SUPPORTED_PROTOCOL_VERSIONS), []);
  assert.deepEqual(missing(protocol, ALL_PROTOCOL_VERSIONS), []);
});

test('the README links every doc this repository ships, and each exists', () => {
  const readme = read('README.md');
  const docs = [
    'docs/tools.md',
    'docs/protocol.md',
    'docs/supervisor.md',
    'docs/security.md',
    'docs/library.md',
    'docs/maintaining-cli-tree.md',
    'docs/AUDIT.md',
    'docs/architecture.md',
  ];
  assert.deepEqual(
    docs.filter((doc) => !readme.includes(doc)),
    [],
  );
  assert.deepEqual(
    docs.filter((doc) => !existsSync(fileURLToPath(new URL(`../../${doc}`, import.meta.url)))),
    [],
  );
});
