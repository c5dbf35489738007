// The stdio server with an ask_host run whose question is pending, driven by the fake CLI, which asks as the
// real one does with --permission-prompt-tool stdio (a can_use_tool control request on its stdout, the answer
// awaited on its stdin). Nothing of the asking is on a command line or in the temp directory, and however
// the server ends (SIGINT then SIGTERM as Claude Code ends a server, SIGTERM, SIGKILL) nothing of the run
// is left: the supervisor finishes it on its own.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKE_CLAUDE } from '../helpers/tool-harness.ts';
import { findProcesses } from '../helpers/native-env.ts';
import { pollUntil } from '../helpers/poll.ts';
import { objAt, parseObj, questionsOf, rpcResult, toolBody } from '../helpers/typed-results.ts';
import { MAIN, startServer, type ServerProcess } from './server-process.ts';

const DEADLINE_MS = 20_000;
const root = realpathSync(mkdtempSync(join(tmpdir(), 'crm-ask-exit-')));
const tmps: string[] = [];
after(() => {
  for (const dir of [root, ...tmps]) rmSync(dir, { recursive: true, force: true });
});

/** A server's own TMPDIR: whatever an asking run would leave there is seen. */
function newTmp(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 't-')));
  tmps.push(dir);
  return dir;
}

interface Asking {
  readonly server: ServerProcess;
  readonly tag: string;
  readonly home: string;
  /** The fake CLI that asked. */
  readonly nativePid: number;
}

/** A server (TMPDIR = `tmp`) with one claude.run.start ask_host run whose question reached the broker. */
async function askingServer(tmp: string, label: string): Promise<Asking> {
  const home = mkdtempSync(join(root, `${label}-`));
  const readyFile = join(home, 'ready.jsonl');
  const tag = `CRM_ASK_EXIT=${randomBytes(6).toString('hex')}`;
  const [tagName = '', tagValue = ''] = tag.split('=');
  const server = startServer(MAIN, ['--claude-bin', FAKE_CLAUDE], {
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: home,
      TMPDIR: tmp,
      FAKE_CLAUDE_READY_FILE: readyFile,
      [tagName]: tagValue,
    },
  });
  // A failure before the caller holds the server must not leave it running (the file would never end).
  try {
    await server.ready();
    server.send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'spec', version: '0' } },
    });
    await server.response('init');
    server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    server.send({
      jsonrpc: '2.0',
      id: 'start',
      method: 'tools/call',
      params: { name: 'claude.run.start', arguments: { prompt: '[fake:ask_permission] make a marker', cwd: home, ask_host: true } },
    });
    const runId = String(objAt(toolBody(rpcResult(await server.response('start'))), 'result')['run_id']);
    let seq = 0;
    await pollUntil(
      'a pending permission question',
      async () => {
        const id = `result-${(seq += 1)}`;
        server.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'claude.run.result', arguments: { run_id: runId } } });
        return questionsOf(objAt(toolBody(rpcResult(await server.response(id))), 'result')['permission_questions']).pending.length === 1;
      },
      { timeoutMs: DEADLINE_MS, intervalMs: 20 },
    );
    // The question can be pending a moment before the fake CLI has written that it asked: wait for its line too.
    let asked: Record<string, unknown> | undefined;
    await pollUntil(
      'the fake CLI saying it asked',
      () => {
        asked = (existsSync(readyFile) ? readFileSync(readyFile, 'utf8') : '')
          .split('\n')
          .filter((line) => line.endsWith('}'))
          .map((line) => parseObj(line, 'a ready line'))
          .find((line) => line['ready'] === 'asked');
        return asked !== undefined;
      },
      { timeoutMs: DEADLINE_MS, intervalMs: 20 },
    );
    assert.ok(asked && typeof asked['pid'] === 'number' && typeof asked['request_id'] === 'string', 'the fake CLI asked on its stdout');
    return { server, tag, home, nativePid: asked['pid'] };
  } catch (error) {
    server.kill();
    throw error;
  }
}

async function everythingGone(asking: Asking): Promise<void> {
  let left: string[] = [];
  await pollUntil(
    'every process of the run gone',
    async () => {
      left = (await findProcesses({ tag: asking.tag, home: `HOME=${asking.home}`, root: asking.home, excludePid: process.pid })).map(
        (p) => `${p.pid} ${p.cmdline.join(' ')}`,
      );
      return left.length === 0;
    },
    { timeoutMs: DEADLINE_MS },
  ).catch(() => undefined);
  assert.deepEqual(left, []);
}

test("the run asks on the native's own pipes: the stdio prompt tool, no --mcp-config, no bridge, nothing in TMPDIR", async () => {
  const tmp = newTmp();
  const asking = await askingServer(tmp, 'argv');
  try {
    const argv = readFileSync(`/proc/${asking.nativePid}/cmdline`, 'utf8').split('\0');
    assert.equal(argv[argv.indexOf('--permission-prompt-tool') + 1], 'stdio');
    assert.equal(argv.includes('--mcp-config'), false);
    const run = await findProcesses({ tag: asking.tag, home: `HOME=${asking.home}`, root: asking.home, excludePid: process.pid });
    assert.deepEqual(
      run
        // The server (and, in darwin mode, the strace that runs it) names --claude-bin; the supervisor its role.
        .filter(
          (p) => p.pid !== asking.nativePid && !p.cmdline.includes('--claude-bin') && !p.cmdline.some((a) => a.includes('supervisor')),
        )
        .map((p) => p.cmdline.join(' ')),
      [],
      'no process but the server, the supervisor and the native',
    );
    assert.deepEqual(readdirSync(tmp), [], "nothing in the server's TMPDIR");
  } finally {
    asking.server.kill();
    await asking.server.exited();
    await everythingGone(asking);
  }
});

for (const ending of [['SIGINT', 'SIGTERM'], ['SIGTERM'], ['SIGKILL']] as const) {
  test(`${ending.join(' then ')} with a question pending: the run ends on its own, nothing is left, TMPDIR stays empty`, async () => {
    const tmp = newTmp();
    const asking = await askingServer(tmp, 'signal');
    try {
      asking.server.child.kill(ending[0]);
      // Claude Code sends SIGTERM about 100 ms after SIGINT; the server may be gone by then.
      if (ending[1] !== undefined) setTimeout(() => asking.server.child.kill(ending[1]), 100);
      assert.deepEqual(
        await asking.server.exited(),
        ending[0] === 'SIGKILL' ? { code: null, signal: 'SIGKILL' } : { code: 0, signal: null },
      );
      await everythingGone(asking);
      assert.deepEqual(readdirSync(tmp), []);
    } finally {
      asking.server.kill();
    }
  });
}
