// The stdio server process with a task in flight, ended the way Claude Code ends it: SIGINT with stdin
// still open and no tasks/cancel (/exit → "Exit and stop tasks"). The server exits 0 without waiting for the
// run's cleanup (like any signal shutdown); the run's supervisor ends its native process and then itself.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKE_CLAUDE } from '../helpers/tool-harness.ts';
import { findProcesses } from '../helpers/native-env.ts';
import { pollUntil } from '../helpers/poll.ts';
import { at, rpcResult } from '../helpers/typed-results.ts';
import { MAIN, startServer } from './server-process.ts';

const TASKS = 'io.modelcontextprotocol/tasks';
const M = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'claude-code', version: '2.1.332' },
  'io.modelcontextprotocol/clientCapabilities': {
    roots: { listChanged: true },
    elicitation: { form: {}, url: {} },
    extensions: { [TASKS]: {} },
  },
};
const READY_DEADLINE_MS = 20_000;
/** Far above the default ladder (SIGINT grace, SIGTERM grace, SIGKILL) plus the supervisor's exit. */
const GONE_DEADLINE_MS = 20_000;

it('SIGINT with stdin open and a task working: run cancelled, every process it started gone, exit 0', async (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-tasks-sigint-')));
  const readyFile = join(dir, 'ready.jsonl');
  const tag = `CRM_TASK_SIGINT=${randomBytes(6).toString('hex')}`;
  const [tagName = '', tagValue = ''] = tag.split('=');
  const server = startServer(MAIN, ['--claude-bin', FAKE_CLAUDE], {
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: dir,
      FAKE_CLAUDE_READY_FILE: readyFile,
      FAKE_CLAUDE_SLOW_EVENTS: '1000',
      FAKE_CLAUDE_DELAY_MS: '50',
      [tagName]: tagValue,
    },
  });
  try {
    await server.ready();
    // The wire as Claude Code's TUI writes it: discover, tools/list, tools/call, an immediate tasks/get.
    server.send({ jsonrpc: '2.0', id: 'server-discover-probe-1', method: 'server/discover', params: { _meta: M } });
    const discovered = rpcResult(await server.response('server-discover-probe-1'));
    assert.deepEqual(at(discovered, 'capabilities', 'extensions'), { [TASKS]: {} });
    server.send({ jsonrpc: '2.0', id: 0, method: 'tools/list', params: { _meta: M } });
    await server.response(0);
    server.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'claude.run',
        arguments: { prompt: '[fake:slow] long', cwd: dir },
        _meta: { ...M, 'claudecode/toolUseId': 'toolu_1', 'progressToken': 1 },
      },
    });
    const task = rpcResult(await server.response(1));
    assert.equal(task['resultType'], 'task');
    server.send({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { taskId: task['taskId'], _meta: M } });
    assert.equal(rpcResult(await server.response(2))['status'], 'working');

    await pollUntil('the native run streaming', () => existsSync(readyFile) && readFileSync(readyFile, 'utf8').includes('"streaming"'), {
      timeoutMs: READY_DEADLINE_MS,
      intervalMs: 10,
    });
    const started = await findProcesses({ tag, home: `HOME=${dir}`, root: dir, excludePid: process.pid });
    assert.ok(
      started.some((p) => p.pid !== server.child.pid),
      'the run has processes of its own',
    );

    const signalled = performance.now();
    server.child.kill('SIGINT'); // stdin stays open, as Claude Code leaves it
    assert.deepEqual(await server.exited(), { code: 0, signal: null });
    t.diagnostic(`SIGINT to exit with a task working: ${(performance.now() - signalled).toFixed(1)} ms`);
    assert.ok(server.stderr().includes('SIGINT: closing'));
    // A signal shutdown starts the end of every run without waiting for it: the supervisors finish the
    // ladder after the server is gone. Everything must be gone within the ladder's bound.
    let left: string[] = [];
    await pollUntil(
      'every process the task started gone',
      async () => {
        left = (await findProcesses({ tag, home: `HOME=${dir}`, root: dir, excludePid: process.pid })).map(
          (p) => `${p.pid} ${p.cmdline.join(' ')}`,
        );
        return left.length === 0;
      },
      { timeoutMs: GONE_DEADLINE_MS },
    ).catch(() => undefined);
    assert.deepEqual(left, [], 'nothing the task started survives the server');
    // No response about the task after it: nobody polls it any more (and nothing was written past exit).
    for (const line of server.lines) assert.doesNotThrow(() => JSON.parse(line));
  } finally {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});
