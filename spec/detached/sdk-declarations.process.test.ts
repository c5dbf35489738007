// Through the official SDK client over stdio: tools/list order, `_meta` declarations and annotations
// on every tool, and the --underscore-names startup option (advertised names and calls by them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSdkServer } from './sdk-server.ts';
import { arrAt } from '../helpers/typed-results.ts';

const DOTTED = [
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
];
const WORK = { format_version: 1, uri: 'computer-mcp://runtime/work/v1' };
const CONTINUATION = { format_version: 1, selector: { kind: 'claude.run', resource_id: { json_pointer: '/run_id' } } };
const RISK: Record<string, string> = {
  'claude.run': 'full-shell',
  'claude.run.start': 'full-shell',
  'claude.run.list': 'read-only',
  'claude.run.result': 'read-only',
  'claude.run.events': 'read-only',
  'claude.run.cancel': 'destructive',
  'claude.run.release': 'destructive',
  'claude.run.send': 'full-shell',
  'claude.run.close': 'destructive',
  'claude.run.answer': 'destructive',
  'claude.worktree.remove': 'destructive',
};
const TAKES_RUN_ID = new Set([
  'claude.run.result',
  'claude.run.events',
  'claude.run.cancel',
  'claude.run.release',
  'claude.run.send',
  'claude.run.close',
  'claude.run.answer',
]);

test('SDK listTools: fixed order, risk/work/continuation _meta and matching annotations', async () => {
  const server = await startSdkServer();
  try {
    const { tools } = await server.client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      DOTTED,
    );
    assert.deepEqual(
      (await server.client.listTools()).tools.map((t) => t.name),
      DOTTED,
      'deterministic across calls',
    );
    for (const tool of tools) {
      const risk = RISK[tool.name]!;
      const expected: Record<string, unknown> = { 'io.github.computer-mcp/risk': risk, 'io.github.computer-mcp/work': WORK };
      if (TAKES_RUN_ID.has(tool.name)) expected['io.github.computer-mcp/continuation'] = CONTINUATION;
      assert.deepEqual(tool._meta, expected, tool.name);
      assert.equal(
        TAKES_RUN_ID.has(tool.name),
        (tool.inputSchema.required ?? []).includes('run_id'),
        `${tool.name}: continuation exactly on run_id tools`,
      );
      const a = tool.annotations!;
      assert.equal(a.readOnlyHint, risk === 'read-only', tool.name);
      assert.equal(a.destructiveHint, risk !== 'read-only', tool.name);
      assert.equal(a.openWorldHint, risk === 'full-shell', tool.name);
      assert.equal(a.idempotentHint, risk !== 'full-shell', tool.name);
      assert.equal(tool.inputSchema['additionalProperties'], false, `${tool.name}: unknown arguments are refused`);
    }
    const description = tools.find((t) => t.name === 'claude.run.start')!.description ?? '';
    for (const phrase of [/at most 32 retained/, /4 active/, /die with it/, /pass its session_id as resume_session_id/])
      assert.match(description, phrase);
    const { resources } = await server.client.listResources();
    assert.ok(resources.some((r) => r.uri === WORK.uri));
  } finally {
    await server.close();
  }
});

test('SDK with --underscore-names: claude_run_* advertised and callable, dotted names unknown', async () => {
  const server = await startSdkServer({ args: ['--underscore-names'] });
  try {
    const { tools } = await server.client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      DOTTED.map((n) => n.replaceAll('.', '_')),
    );
    assert.deepEqual(
      tools.map((t) => t._meta?.['io.github.computer-mcp/risk']),
      DOTTED.map((n) => RISK[n]),
    );

    const sync = await server.call('claude_run', { prompt: 'hi', cwd: server.dir });
    assert.equal(sync.isError, false);
    const runId = await server.start({ prompt: 'detached' }, undefined, 'claude_run_start');
    const done = await server.settled(runId, 'claude_run_result');
    assert.equal(done.result?.['is_error'], false);
    const events = await server.call('claude_run_events', { run_id: runId, limit: 3 });
    assert.equal(arrAt(events.result, 'events').length, 3);
    assert.equal((await server.call('claude_run_cancel', { run_id: runId })).result?.['cancel_requested'], false);
    assert.equal((await server.call('claude_run_list', {})).result?.['retained'], 2);
    assert.equal((await server.call('claude_run_release', { run_id: runId })).result?.['released'], true);
    await assert.rejects(
      server.client.callTool({ name: 'claude.run.list', arguments: {} }),
      (error: { code?: number }) => error.code === -32602,
    );
  } finally {
    await server.close();
  }
});
