// The library face, driven directly: createClaudeRunAdapter() with the fake CLI, no stdio anywhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClaudeRunAdapter, createAdapter, TOOL_NAMES, type Adapter, type ClaudeRunAdapterOptions } from '../../lib/index.ts';
import { parseServeArgs } from '../../lib/cli/args.ts';
import { createProviders } from '../../lib/tools/providers.ts';
import { FAKE_CLAUDE } from '../helpers/tool-harness.ts';
import { readProcStat, waitForGone, waitForReady } from '../helpers/proc.ts';
import { identityOf } from '../../lib/process/proc-stat.ts';
import { specBundle } from '../helpers/bundle.ts';
import { at, firstText, obj, objs, parseObj, rpcError, rpcResult, toolResultOf } from '../helpers/typed-results.ts';

type Json = Record<string, unknown>;

async function withAdapter(
  options: Partial<ClaudeRunAdapterOptions> & { scenarioEnv?: Record<string, string> },
  body: (adapter: Adapter, dir: string, rpc: (method: string, params?: Json) => Promise<Json>) => Promise<void>,
): Promise<void> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-lib-')));
  const { scenarioEnv, ...rest } = options;
  const adapter = createClaudeRunAdapter({
    claudeBin: FAKE_CLAUDE,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, ...scenarioEnv },
    cwd: dir,
    ...rest,
  });
  let id = 0;
  const rpc = async (method: string, params?: Json): Promise<Json> =>
    obj(await adapter.handle({ jsonrpc: '2.0', id: ++id, method, ...(params ? { params } : {}) }), `${method} response`);
  try {
    await body(adapter, dir, rpc);
  } finally {
    await adapter.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const resultOf = rpcResult;

test("initialize, tools/list and resources through the library: the server's tools, resources and limits", async () => {
  await withAdapter({ maxTimeoutSeconds: 900, maxOpenIdleSeconds: 120 }, async (adapter, _dir, rpc) => {
    const init = resultOf(
      await rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'lib', version: '0' } }),
    );
    assert.equal(init['protocolVersion'], '2025-11-25');
    assert.deepEqual(init['serverInfo'], { name: 'claude-run-mcp', version: '0.1.0' });
    assert.equal(await adapter.handle({ jsonrpc: '2.0', method: 'notifications/initialized' }), undefined);
    const tools = objs(resultOf(await rpc('tools/list'))['tools'], 'tools');
    assert.deepEqual(
      tools.map((t) => t['name']),
      [...TOOL_NAMES],
    );
    assert.equal(at(tools, 0, 'inputSchema', 'properties', 'timeout_seconds', 'maximum'), 900);
    const resources = objs(resultOf(await rpc('resources/list'))['resources'], 'resources');
    assert.deepEqual(
      resources.map((r) => r['uri']),
      ['claude-run://capabilities', 'computer-mcp://runtime/work/v1'],
    );
    const read = resultOf(await rpc('resources/read', { uri: 'claude-run://capabilities' }));
    const capabilities = parseObj(firstText(read, 'contents'), 'the capabilities resource');
    assert.equal(at(capabilities, 'limits', 'max_timeout_seconds'), 900);
    assert.equal(at(capabilities, 'limits', 'max_open_idle_seconds'), 120);
    assert.equal(at(tools, 1, 'inputSchema', 'properties', 'open_idle_seconds', 'maximum'), 120);
    assert.equal(at(capabilities, 'limits', 'max_retained_runs'), 32);
    assert.equal(at(capabilities, 'limits', 'max_active_runs'), 4);
    assert.equal(at(capabilities, 'native', 'binary'), FAKE_CLAUDE);
  });
});

test('with default options the library lists exactly what the stdio server lists', async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-lib-eq-')));
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir };
  const parsed = parseServeArgs([]);
  assert.equal(parsed.kind, 'config');
  if (parsed.kind !== 'config') return;
  const serverProviders = createProviders({ ...parsed.config, env, cwd: dir });
  const server = createAdapter({
    toolProvider: serverProviders.toolProvider,
    resourceProvider: serverProviders.resourceProvider,
    onClose: serverProviders.close,
  });
  const library = createClaudeRunAdapter({ env, cwd: dir });
  try {
    const lists: unknown[] = [];
    for (const adapter of [server, library]) {
      await adapter.handle({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } },
      });
      lists.push(await adapter.handle({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
      lists.push(await adapter.handle({ jsonrpc: '2.0', id: 3, method: 'resources/list' }));
    }
    assert.deepEqual(lists.slice(2), lists.slice(0, 2));
  } finally {
    await server.close();
    await library.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('underscoreNames lists claude_run… and only that spelling is callable', async () => {
  await withAdapter({ underscoreNames: true }, async (_adapter, dir, rpc) => {
    await rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lib', version: '0' } });
    const tools = objs(resultOf(await rpc('tools/list'))['tools'], 'tools');
    assert.deepEqual(
      tools.map((t) => t['name']),
      TOOL_NAMES.map((n) => n.replaceAll('.', '_')),
    );
    const dotted = await rpc('tools/call', { name: 'claude.run', arguments: { prompt: 'x', cwd: dir } });
    assert.equal(rpcError(dotted).code, -32602);
  });
});

test('claude.run through handle(): progress via onNotification, a completed result with confirmed cleanup', async () => {
  await withAdapter({}, async (adapter, dir, rpc) => {
    const notifications: Json[] = [];
    const unsubscribe = adapter.onNotification((n) => notifications.push(n));
    await rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lib', version: '0' } });
    const response = await rpc('tools/call', {
      name: 'claude.run',
      arguments: { prompt: 'say hi', cwd: dir },
      _meta: { progressToken: 7 },
    });
    const call = resultOf(response);
    assert.equal(call['isError'], false, JSON.stringify(call));
    const result = toolResultOf(call);
    assert.equal(result['state'], 'completed');
    assert.equal(result['result'], 'Hi! I am a fake Claude.');
    assert.equal(result['cleanup_confirmed'], true);
    const progress = notifications.filter((n) => n['method'] === 'notifications/progress');
    assert.ok(progress.length >= 5, `progress: ${progress.length}`);
    assert.ok(progress.every((n) => at(n, 'params', 'progressToken') === 7));
    unsubscribe();
    const before = notifications.length;
    await rpc('tools/call', { name: 'claude.run', arguments: { prompt: 'again', cwd: dir }, _meta: { progressToken: 8 } });
    assert.equal(notifications.length, before, 'no notification reaches an unsubscribed listener');
  });
});

test('close() cancels a running detached run and resolves only after its processes are gone', async () => {
  const readyDir = mkdtempSync(join(tmpdir(), 'crm-lib-ready-'));
  const readyFile = join(readyDir, 'ready.jsonl');
  try {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-lib-close-')));
    const adapter = createClaudeRunAdapter({
      claudeBin: FAKE_CLAUDE,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: dir,
        FAKE_CLAUDE_SCENARIO: 'slow',
        FAKE_CLAUDE_SLOW_EVENTS: '10000',
        FAKE_CLAUDE_READY_FILE: readyFile,
      },
      cwd: dir,
    });
    try {
      await adapter.handle({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lib', version: '0' } },
      });
      const started = await adapter.handle({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'claude.run.start', arguments: { prompt: 'long', cwd: dir } },
      });
      assert.equal(resultOf(started)['isError'], false);
      const native = await waitForReady(readyFile, 'streaming');
      const supervisorStat = readProcStat(readProcStat(native.pid)?.ppid ?? -1);
      assert.ok(supervisorStat, "the supervisor is the native process's parent");
      const supervisor = identityOf(supervisorStat);
      await adapter.close();
      // close() waited for the supervisor's report, so nothing may remain; the short deadline only absorbs reaping.
      await waitForGone([native, supervisor], 1000);
      assert.equal(rpcError(await adapter.handle({ jsonrpc: '2.0', id: 3, method: 'ping' })).code, -32001);
    } finally {
      await adapter.close();
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    rmSync(readyDir, { recursive: true, force: true });
  }
});

test("supervisorCommand can point at the single-file bundle: its __supervisor role supervises the library's runs", async () => {
  const file = await specBundle();
  const readyDir = mkdtempSync(join(tmpdir(), 'crm-lib-bundle-'));
  try {
    const readyFile = join(readyDir, 'ready.jsonl');
    await withAdapter(
      {
        supervisorCommand: { file: process.execPath, args: [file, '__supervisor'] },
        scenarioEnv: {
          FAKE_CLAUDE_SCENARIO: 'slow',
          FAKE_CLAUDE_SLOW_EVENTS: '3',
          FAKE_CLAUDE_DELAY_MS: '100',
          FAKE_CLAUDE_READY_FILE: readyFile,
        },
      },
      async (_adapter, dir, rpc) => {
        await rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lib', version: '0' } });
        const pending = rpc('tools/call', { name: 'claude.run', arguments: { prompt: 'x', cwd: dir } });
        const native = await waitForReady(readyFile, 'streaming');
        const parent = readProcStat(native.pid)?.ppid ?? -1;
        const argv = readFileSync(`/proc/${parent}/cmdline`, 'utf8').split('\0').filter(Boolean);
        assert.deepEqual(argv.slice(1), [file, '__supervisor', '--platform=linux']);
        const result = toolResultOf(resultOf(await pending));
        assert.equal(result['is_error'], false, JSON.stringify(result['error']));
        assert.equal(result['cleanup_confirmed'], true);
      },
    );
  } finally {
    rmSync(readyDir, { recursive: true, force: true });
  }
});

test('options are validated: maxTimeoutSeconds 1..86400 (both bounds and one past each), cwd absolute, claudeBin non-empty', async () => {
  const base = { env: { PATH: '/usr/bin:/bin' }, cwd: tmpdir() };
  for (const ok of [1, 86_400]) await createClaudeRunAdapter({ ...base, maxTimeoutSeconds: ok }).close();
  for (const bad of [0, 86_401, 1.5]) assert.throws(() => createClaudeRunAdapter({ ...base, maxTimeoutSeconds: bad }), RangeError);
  assert.throws(() => createClaudeRunAdapter({ ...base, cwd: 'relative/dir' }), TypeError);
  assert.throws(() => createClaudeRunAdapter({ ...base, claudeBin: '' }), TypeError);
  for (const ok of [0.000001, 1_000_000, 2.5]) await createClaudeRunAdapter({ ...base, budgetUsd: ok }).close();
  for (const bad of [0, -1, 1_000_000.000001, 0.0000001, Number.NaN, Infinity])
    assert.throws(() => createClaudeRunAdapter({ ...base, budgetUsd: bad }), RangeError, String(bad));
});

test('the npm entry exports what lib/index.ts exports; compiled it defaults supervisors to the sibling bundle, from source to the usual command', async () => {
  const index = await import('../../lib/index.ts');
  const entry = await import('../../lib/npm-entry.ts');
  assert.deepEqual(
    Object.keys(index).filter((name) => !(name in entry)),
    [],
  );
  assert.deepEqual(entry.getPackagedSupervisorCommand('file:///opt/pkg/dist/index.mjs'), {
    file: process.execPath,
    args: ['/opt/pkg/dist/claude-run-mcp.cjs', '__supervisor'],
  });
  assert.equal(entry.getPackagedSupervisorCommand(), null, 'loaded from source (.ts)');
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-lib-entry-')));
  const adapter = entry.createClaudeRunAdapter({
    claudeBin: FAKE_CLAUDE,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir },
    cwd: dir,
  });
  try {
    await adapter.handle({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lib', version: '0' } },
    });
    const result = toolResultOf(
      resultOf(
        await adapter.handle({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'claude.run', arguments: { prompt: 'x', cwd: dir } },
        }),
      ),
    );
    assert.equal(result['is_error'], false, JSON.stringify(result['error']));
    assert.equal(result['cleanup_confirmed'], true);
  } finally {
    await adapter.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
