import { test } from 'node:test';
import assert from 'node:assert/strict';
import { META_RISK, TOOL_NAMES, fromWireName, toWireName, toolAnnotations, toolMeta } from '../../lib/tools/declarations.ts';
import { objAt } from '../helpers/typed-results.ts';

const WORK = { format_version: 1, uri: 'computer-mcp://runtime/work/v1' };
const CONTINUATION = { format_version: 1, selector: { kind: 'claude.run', resource_id: { json_pointer: '/run_id' } } };

const EXPECTED = {
  'claude.run': { risk: 'full-shell', continuation: false, readOnly: false, destructive: true, idempotent: false, openWorld: true },
  'claude.run.start': { risk: 'full-shell', continuation: false, readOnly: false, destructive: true, idempotent: false, openWorld: true },
  'claude.run.list': { risk: 'read-only', continuation: false, readOnly: true, destructive: false, idempotent: true, openWorld: false },
  'claude.run.result': { risk: 'read-only', continuation: true, readOnly: true, destructive: false, idempotent: true, openWorld: false },
  'claude.run.events': { risk: 'read-only', continuation: true, readOnly: true, destructive: false, idempotent: true, openWorld: false },
  'claude.run.cancel': { risk: 'destructive', continuation: true, readOnly: false, destructive: true, idempotent: true, openWorld: false },
  'claude.run.release': { risk: 'destructive', continuation: true, readOnly: false, destructive: true, idempotent: true, openWorld: false },
  'claude.run.send': { risk: 'full-shell', continuation: true, readOnly: false, destructive: true, idempotent: false, openWorld: true },
  'claude.run.close': { risk: 'destructive', continuation: true, readOnly: false, destructive: true, idempotent: true, openWorld: false },
  'claude.run.answer': { risk: 'destructive', continuation: true, readOnly: false, destructive: true, idempotent: true, openWorld: false },
  'claude.worktree.remove': {
    risk: 'destructive',
    continuation: false,
    readOnly: false,
    destructive: true,
    idempotent: true,
    openWorld: false,
  },
} as const;

test('the canonical tool list, in order', () => {
  assert.deepEqual(TOOL_NAMES, [
    'claude.run',
    'claude.run.start',
    'claude.run.list',
    'claude.run.result',
    'claude.run.events',
    'claude.run.cancel',
    'claude.run.release',
    'claude.run.send',
    'claude.run.close',
    'claude.run.answer',
    'claude.worktree.remove',
  ]);
  assert.deepEqual(Object.keys(EXPECTED), [...TOOL_NAMES]);
});

for (const name of TOOL_NAMES) {
  test(`${name}: _meta and annotations`, () => {
    const want = EXPECTED[name];
    const meta = toolMeta(name);
    const expectedMeta: Record<string, unknown> = {
      'io.github.computer-mcp/risk': want.risk,
      'io.github.computer-mcp/work': WORK,
    };
    if (want.continuation) expectedMeta['io.github.computer-mcp/continuation'] = CONTINUATION;
    assert.deepEqual(meta, expectedMeta);
    assert.equal(toolMeta(name)[META_RISK], want.risk);
    assert.deepEqual(toolAnnotations(name), {
      readOnlyHint: want.readOnly,
      destructiveHint: want.destructive,
      idempotentHint: want.idempotent,
      openWorldHint: want.openWorld,
    });
  });
}

test('toolMeta returns a fresh object each call', () => {
  const a = toolMeta('claude.run.result');
  a['io.github.computer-mcp/risk'] = 'tampered';
  objAt(a, 'io.github.computer-mcp/work')['uri'] = 'x';
  assert.deepEqual(toolMeta('claude.run.result')['io.github.computer-mcp/risk'], 'read-only');
  assert.deepEqual(toolMeta('claude.run.result')['io.github.computer-mcp/work'], WORK);
});

test('wire names: dotted by default, underscores on request, and back', () => {
  assert.equal(toWireName('claude.run.start', false), 'claude.run.start');
  assert.equal(toWireName('claude.run.start', true), 'claude_run_start');
  assert.deepEqual(
    TOOL_NAMES.map((n) => toWireName(n, true)),
    [
      'claude_run',
      'claude_run_start',
      'claude_run_list',
      'claude_run_result',
      'claude_run_events',
      'claude_run_cancel',
      'claude_run_release',
      'claude_run_send',
      'claude_run_close',
      'claude_run_answer',
      'claude_worktree_remove',
    ],
  );
  assert.equal(fromWireName('claude_run_release', true), 'claude.run.release');
  assert.equal(fromWireName('claude.run.release', true), null);
  assert.equal(fromWireName('claude_run_release', false), null);
  assert.equal(fromWireName('claude.run', false), 'claude.run');
  assert.equal(fromWireName('claude.run.events', false), 'claude.run.events');
  assert.equal(fromWireName('claude.run.delete', false), null);
});
