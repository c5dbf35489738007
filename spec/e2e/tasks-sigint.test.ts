// The stdio server process with a task in flight, ended the way Claude Code ends it: SIGINT with stdin
// still open and no tasks/cancel (/exit → "Exit and stop tasks"). The task's run is cancelled and its
// native process and supervisor are gone before the server exits 0.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { FAKE_CLAUDE } from '../helpers/tool-harness.ts';
import { findProcesses } from '../helpers/native-env.ts';
import { MAIN, startServer } from './server-process.ts';

const TASKS = 'io.modelcontextprotocol/tasks';
const M = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'claude-code', version: '2.1.332' },
  'io.modelcontextprotocol/clientCapabilities': { roots: { listChanged: true }, elicitation: { form: {}, url: {} }, extensions: { [TASKS]: {} } },
};
const READY_DEADLINE_MS = 20_000;
/** The supervisor's whole ladder (4.5 s) plus its boot under tsx on a busy machine: only a leak reaches it. */
const CLEANUP_DEADLINE_MS = 30_000;

it('SIGINT with stdin open and a task working: run cancelled, every process it started gone, exit 0', async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-tasks-sigint-')));
  const readyFile = join(dir, 'ready.jsonl');
  const tag = `CRM_TASK_SIGINT=${randomBytes(6).toString('hex')}`;
  const [tagName, tagValue] = tag.split('=') as [string, string];
  const server = startServer(MAIN, ['--claude-bin', FAKE_CLAUDE], { env: {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, FAKE_CLAUDE_READY_FILE: readyFile, FAKE_CLAUDE_SLOW_EVENTS: '1000', FAKE_CLAUDE_DELAY_MS: '50', [tagName]: tagValue,
  } });
  try {
    await server.ready();
    // The wire as Claude Code's TUI writes it: discover, tools/list, tools/call, an immediate tasks/get.
    server.send({ jsonrpc: '2.0', id: 'server-discover-probe-1', method: 'server/discover', params: { _meta: M } });
    const discovered = (await server.response('server-discover-probe-1'))['result'] as Record<string, unknown>;
    assert.deepEqual((discovered['capabilities'] as { extensions: unknown }).extensions, { [TASKS]: {} });
    server.send({ jsonrpc: '2.0', id: 0, method: 'tools/list', params: { _meta: M } });
    await server.response(0);
    server.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'claude.run', arguments: { prompt: '[fake:slow] long', cwd: dir }, _meta: { ...M, 'claudecode/toolUseId': 'toolu_1', progressToken: 1 } } });
    const task = (await server.response(1))['result'] as Record<string, unknown>;
    assert.equal(task['resultType'], 'task');
    server.send({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { taskId: task['taskId'], _meta: M } });
    assert.equal(((await server.response(2))['result'] as Record<string, unknown>)['status'], 'working');

    const deadline = performance.now() + READY_DEADLINE_MS;
    while (!(existsSync(readyFile) && readFileSync(readyFile, 'utf8').includes('"streaming"'))) {
      assert.ok(performance.now() < deadline, 'the native run never started streaming');
      await delay(10);
    }
    const started = await findProcesses({ tag, home: `HOME=${dir}`, root: dir, excludePid: process.pid });
    assert.ok(started.some((p) => p.pid !== server.child.pid), 'the run has processes of its own');

    server.child.kill('SIGINT'); // stdin stays open, as Claude Code leaves it
    assert.deepEqual(await server.exited(), { code: 0, signal: null });
    assert.ok(server.stderr().includes('SIGINT: closing'));
    // The server exits at once; the run's supervisor carries the cleanup on after it (docs/supervisor.md).
    let left = await findProcesses({ tag, home: `HOME=${dir}`, root: dir, excludePid: process.pid });
    const goneBy = performance.now() + CLEANUP_DEADLINE_MS;
    while (left.length > 0 && performance.now() < goneBy) {
      await delay(50);
      left = await findProcesses({ tag, home: `HOME=${dir}`, root: dir, excludePid: process.pid });
    }
    assert.deepEqual(left.map((p) => `${p.pid} ${p.cmdline.join(' ')}`), [], 'nothing the task started survives the server');
    // No response about the task after it: nobody polls it any more (and nothing was written past exit).
    for (const line of server.lines) assert.doesNotThrow(() => JSON.parse(line));
  } finally {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});
