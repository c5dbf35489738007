// The stdio server with an ask_host run whose question is pending, driven by the fake CLI, which starts the
// bridge as the real one does (the server named in --mcp-config, with its own environment plus the server's
// env). The bridge's socket path and token travel in the native's environment and appear on no process's
// command line. However the server ends, the run's private directory does not outlive it: SIGINT then
// SIGTERM (how Claude Code ends a server) remove it before the exit; after a SIGKILL, the next server to
// start removes it, and leaves a live server's directory alone.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKE_CLAUDE } from '../helpers/tool-harness.ts';
import { findProcesses } from '../helpers/native-env.ts';
import { pollUntil } from '../helpers/poll.ts';
import { objAt, parseObj, questionsOf, rpcResult, toolBody } from '../helpers/typed-results.ts';
import { BRIDGE_ENV } from '../../lib/permission/spec.ts';
import { MAIN, startServer, type ServerProcess } from './server-process.ts';

const DEADLINE_MS = 20_000;
const root = realpathSync(mkdtempSync(join(tmpdir(), 'crm-ask-exit-')));
const tmps: string[] = [];
after(() => {
  for (const dir of [root, ...tmps]) rmSync(dir, { recursive: true, force: true });
});

/** A server's TMPDIR: short, as its brokers' socket paths (owner-named directory, bridge.sock) must fit a Unix socket path. */
function newTmp(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 't-')));
  tmps.push(dir);
  return dir;
}

interface Asking {
  readonly server: ServerProcess;
  readonly tag: string;
  readonly home: string;
  readonly bridgePid: number;
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
      params: { name: 'claude.run.start', arguments: { prompt: '[fake:ask_bridge] make a marker', cwd: home, ask_host: true } },
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
      'the fake CLI saying it started the bridge',
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
    assert.ok(asked && typeof asked['bridge'] === 'number', 'the fake CLI started the bridge');
    return { server, tag, home, bridgePid: asked['bridge'] };
  } catch (error) {
    server.kill();
    throw error;
  }
}

const privateDirs = (tmp: string): string[] => readdirSync(tmp).filter((name) => name.startsWith('crm-perm-'));

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

test('the socket path and token reach the bridge through the environment and are on no command line', async () => {
  const tmp = newTmp();
  const asking = await askingServer(tmp, 'argv');
  try {
    const environ = readFileSync(`/proc/${asking.bridgePid}/environ`, 'utf8').split('\0');
    const value = (name: string): string => (environ.find((entry) => entry.startsWith(`${name}=`)) ?? '').slice(name.length + 1);
    const token = value(BRIDGE_ENV.token);
    const socket = value(BRIDGE_ENV.socket);
    assert.match(token, /^[0-9a-f]{64}$/);
    assert.ok(socket.startsWith(`${tmp}/crm-perm-`), socket);
    const leaks: string[] = [];
    for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      let cmdline: string;
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      if (cmdline.includes(token) || cmdline.includes(socket) || cmdline.includes(BRIDGE_ENV.token))
        leaks.push(`${pid}: ${cmdline.replaceAll('\0', ' ')}`);
    }
    assert.deepEqual(leaks, [], 'no command line carries the token or the socket path');
  } finally {
    asking.server.kill();
    await asking.server.exited();
    await everythingGone(asking);
  }
});

for (const ending of [['SIGINT', 'SIGTERM'], ['SIGTERM']] as const) {
  test(`${ending.join(' then ')} with a question pending: the private directory is gone when the server has exited`, async () => {
    const tmp = newTmp();
    const asking = await askingServer(tmp, 'signal');
    try {
      assert.equal(privateDirs(tmp).length, 1);
      asking.server.child.kill(ending[0]);
      // Claude Code sends SIGTERM about 100 ms after SIGINT; the server may be gone by then.
      if (ending[1] !== undefined) setTimeout(() => asking.server.child.kill(ending[1]), 100);
      assert.deepEqual(await asking.server.exited(), { code: 0, signal: null });
      assert.deepEqual(privateDirs(tmp), [], 'removed before the exit');
      await everythingGone(asking);
    } finally {
      asking.server.kill();
    }
  });
}

test("SIGKILL with a question pending: the next server removes the directory, and not a live server's", async () => {
  const tmp = newTmp();
  const killed = await askingServer(tmp, 'killed');
  const [killedDir] = privateDirs(tmp);
  const alive = await askingServer(tmp, 'alive');
  const aliveDir = privateDirs(tmp).find((name) => name !== killedDir);
  let next: ServerProcess | null = null;
  try {
    assert.ok(killedDir && aliveDir);
    killed.server.child.kill('SIGKILL');
    assert.deepEqual(await killed.server.exited(), { code: null, signal: 'SIGKILL' });
    await everythingGone(killed);
    assert.ok(existsSync(join(tmp, killedDir)), 'a killed server runs no code: its directory stays');
    const home = join(root, 'next');
    mkdirSync(home);
    next = startServer(MAIN, ['--claude-bin', FAKE_CLAUDE], {
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, TMPDIR: tmp },
    });
    await next.ready();
    next.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list', params: {} });
    const sweptLine = 'removed 1 private permission directory of servers that are gone';
    await pollUntil('the sweep line', () => next!.stderr().includes(sweptLine), { timeoutMs: DEADLINE_MS, intervalMs: 20 });
    assert.equal(existsSync(join(tmp, killedDir)), false, "the killed server's directory is removed");
    assert.ok(existsSync(join(tmp, aliveDir)), "the live server's directory stays");
  } finally {
    next?.kill();
    alive.server.kill();
    killed.server.kill();
    await alive.server.exited();
    await everythingGone(alive);
  }
});
