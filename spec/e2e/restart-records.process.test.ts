// A server that is gone, and a NEW server asked about its task ids (what Claude Code does after /exit and
// --continue, or /mcp → Reconnect after the server died): the new server answers at once from the run's record
// in the state directory, never "task not found" for a run that certainly ended. Real stdio servers, the fake CLI.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKE_CLAUDE } from '../helpers/tool-harness.ts';
import { pollUntil } from '../helpers/poll.ts';
import { at, rpcResult } from '../helpers/typed-results.ts';
import { MAIN, startServer, type ServerProcess } from './server-process.ts';
import { runIdInstance } from '../../lib/runs/ids.ts';
import { defaultStateDir, recordName } from '../../lib/state/paths.ts';
import { inDarwinMode } from '../helpers/darwin-mode.ts';

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
const DEADLINE_MS = 20_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Scene {
  readonly dir: string;
  readonly readyFile: string;
  readonly env: NodeJS.ProcessEnv;
}

function scene(extra: NodeJS.ProcessEnv = {}): Scene {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-restart-')));
  const readyFile = join(dir, 'ready.jsonl');
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, FAKE_CLAUDE_READY_FILE: readyFile, ...extra };
  return { dir, readyFile, env };
}

async function startTask(server: ServerProcess, cwd: string, prompt: string): Promise<string> {
  await server.ready();
  server.send({
    jsonrpc: '2.0',
    id: 'call',
    method: 'tools/call',
    params: { name: 'claude.run', arguments: { prompt, cwd }, _meta: { ...M, 'claudecode/toolUseId': 'toolu_1' } },
  });
  const task = rpcResult(await server.response('call'));
  assert.equal(task['resultType'], 'task');
  return String(task['taskId']);
}

/** The record file as JSON once `probe` accepts it (written by the server that runs the task). */
async function recordWhen(file: string, probe: (record: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  return pollUntil(
    `the record ${file}`,
    () => {
      if (!existsSync(file)) return undefined;
      const record = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      return probe(record) ? record : undefined;
    },
    { timeoutMs: DEADLINE_MS, intervalMs: 10 },
  );
}

async function ask(server: ServerProcess, id: string, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  server.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: M } });
  return server.response(id);
}

async function resultTool(server: ServerProcess, id: string, runId: string): Promise<Record<string, unknown>> {
  return rpcResult(await ask(server, id, 'tools/call', { name: 'claude.run.result', arguments: { run_id: runId } }));
}

/** A run id of the same (gone) instance that was never issued, and one of no instance that ever ran. */
function forgedIds(runId: string): string[] {
  const tail = randomBytes(16).toString('base64url');
  return [runId.slice(0, 26) + tail, `run_${randomBytes(16).toString('base64url')}${tail}`];
}

async function assertUnknown(server: ServerProcess, runId: string, tag: string): Promise<void> {
  const response = await ask(server, `get-${tag}`, 'tasks/get', { taskId: runId });
  assert.equal(at(response, 'error', 'code'), -32602, `${tag}: still task not found`);
  const result = await resultTool(server, `res-${tag}`, runId);
  assert.equal(result['isError'], true);
  assert.match(JSON.stringify(result), /run_not_found/);
}

describe('a new server answers for the runs of a server that is gone', () => {
  for (const how of ['SIGKILL', 'SIGINT'] as const) {
    it(`${how} mid-run: tasks/get and claude.run.result answer failed at once, with the session to resume`, async (t) => {
      const s = scene({ FAKE_CLAUDE_SLOW_EVENTS: '1000', FAKE_CLAUDE_DELAY_MS: '50' });
      // The default state directory under HOME (no XDG_STATE_HOME in this environment), as the server's platform names it.
      const stateDir = defaultStateDir(inDarwinMode() ? 'darwin' : 'linux', {}, s.dir)!;
      const first = startServer(MAIN, ['--claude-bin', FAKE_CLAUDE], { env: s.env });
      let second: ServerProcess | null = null;
      try {
        const secret = `secret-prompt-${randomBytes(6).toString('hex')}`;
        const runId = await startTask(first, s.dir, `[fake:slow] ${secret}`);
        const file = join(stateDir, recordName(runId));
        const running = await recordWhen(file, (r) => typeof r['resume_session_id'] === 'string');
        const sessionId = String(running['resume_session_id']);
        assert.match(sessionId, UUID);
        assert.equal(running['ended'], null);
        assert.equal(running['instance'], runIdInstance(runId));
        assert.equal(statSync(stateDir).mode & 0o777, 0o700);
        assert.equal(statSync(file).mode & 0o777, 0o600);
        assert.ok(!readFileSync(file, 'utf8').includes(secret), 'no prompt text in the record');

        first.child.kill(how);
        const exit = await first.exited();
        assert.deepEqual(exit, how === 'SIGKILL' ? { code: null, signal: 'SIGKILL' } : { code: 0, signal: null });
        if (how === 'SIGINT') {
          const ended = await recordWhen(file, (r) => r['ended'] !== null);
          assert.equal(at(ended, 'ended', 'by'), 'server_exit');
        }

        second = startServer(MAIN, ['--claude-bin', FAKE_CLAUDE], { env: s.env });
        await second.ready();
        const asked = performance.now();
        const got = rpcResult(await ask(second, 'get', 'tasks/get', { taskId: runId }));
        t.diagnostic(`tasks/get of the old id answered in ${(performance.now() - asked).toFixed(1)} ms`);
        assert.equal(got['taskId'], runId);
        assert.equal(got['status'], 'failed');
        const message = String(got['statusMessage']);
        assert.match(message, /ended when the server that ran it exited/);
        assert.ok(message.includes(`resume_session_id "${sessionId}"`), message);
        if (how === 'SIGKILL') assert.match(message, /when is not known/);
        else assert.match(message, / at \d{4}-\d{2}-\d{2}T/);
        assert.equal(at(got, 'error', 'code'), -32001);
        assert.ok(!message.includes(secret));

        const cancel = rpcResult(await ask(second, 'cancel', 'tasks/cancel', { taskId: runId }));
        assert.equal(cancel['resultType'], 'complete');
        const update = rpcResult(await ask(second, 'update', 'tasks/update', { taskId: runId, inputResponses: {} }));
        assert.equal(update['resultType'], 'complete');

        const result = await resultTool(second, 'result', runId);
        assert.equal(result['isError'], true);
        const text = JSON.stringify(result);
        assert.match(text, /server_exited/);
        assert.ok(text.includes(sessionId));

        for (const [i, forged] of forgedIds(runId).entries()) await assertUnknown(second, forged, `forged${i}`);
      } finally {
        first.kill();
        second?.kill();
        rmSync(s.dir, { recursive: true, force: true });
      }
    });
  }

  it('a task that completed while nobody polled: the next server answers its completed result from the record', async () => {
    const s = scene({ FAKE_CLAUDE_TEXT: 'the answer kept for later' });
    const stateDir = join(s.dir, 'state');
    const first = startServer(MAIN, ['--claude-bin', FAKE_CLAUDE, '--state-dir', stateDir], { env: s.env });
    let second: ServerProcess | null = null;
    try {
      const runId = await startTask(first, s.dir, 'answer later');
      const settled = await recordWhen(join(stateDir, recordName(runId)), (r) => r['ended'] !== null);
      assert.equal(at(settled, 'ended', 'by'), 'settled');
      first.child.stdin.end();
      assert.deepEqual(await first.exited(), { code: 0, signal: null });

      second = startServer(MAIN, ['--claude-bin', FAKE_CLAUDE, '--state-dir', stateDir], { env: s.env });
      await second.ready();
      const got = rpcResult(await ask(second, 'get', 'tasks/get', { taskId: runId }));
      assert.equal(got['status'], 'completed');
      assert.equal(at(got, 'result', 'isError'), false);
      assert.equal(at(got, 'result', 'structuredContent', 'result', 'result'), 'the answer kept for later');
      assert.equal(at(got, 'result', 'structuredContent', 'result', 'run_id'), runId);

      const result = await resultTool(second, 'result', runId);
      assert.equal(result['isError'], false);
      assert.equal(at(result, 'structuredContent', 'result', 'result'), 'the answer kept for later');
      assert.match(String(at(result, 'content', 0, 'text')), /from the record of the server that ran it/);
    } finally {
      first.kill();
      second?.kill();
      rmSync(s.dir, { recursive: true, force: true });
    }
  });

  it('a state directory that is not private: the server runs without records, says so once, and the capabilities show why', async () => {
    const s = scene();
    const stateDir = join(s.dir, 'state');
    const { mkdirSync, chmodSync } = await import('node:fs');
    mkdirSync(stateDir, { mode: 0o700 });
    chmodSync(stateDir, 0o755);
    const server = startServer(MAIN, ['--claude-bin', FAKE_CLAUDE, '--state-dir', stateDir], { env: s.env });
    try {
      const runId = await startTask(server, s.dir, 'still runs');
      await pollUntil(
        'the task completed',
        async () => rpcResult(await ask(server, `p${Math.random()}`, 'tasks/get', { taskId: runId }))['status'] === 'completed',
        {
          timeoutMs: DEADLINE_MS,
          intervalMs: 50,
        },
      );
      const read = rpcResult(await ask(server, 'caps', 'resources/read', { uri: 'claude-run://capabilities' }));
      const caps = JSON.parse(String(at(read, 'contents', 0, 'text'))) as Record<string, unknown>;
      assert.equal(at(caps, 'state', 'records'), false);
      assert.equal(at(caps, 'state', 'reason'), 'wrong_mode');
      assert.equal(at(caps, 'state', 'detail'), '755');
      assert.equal(server.stderr().match(/records of runs are off \(wrong_mode/g)?.length, 1, server.stderr());
      assert.ok(!existsSync(join(stateDir, recordName(runId))));
    } finally {
      server.kill();
      rmSync(s.dir, { recursive: true, force: true });
    }
  });
});
