// The permission bridge (the real process, from source) against a real broker over its private socket:
// the MCP handshake the pinned CLI performs, the only answer shape it accepts, and every way a question
// ends without an allow from the host (timeout, closed broker, unreachable broker, withdrawn call, wrong
// token, malformed lines, overflow) — each a deny. The native tier proves the same on the real binary.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { once } from 'node:events';
import { systemClock } from '../../lib/util/clock.ts';
import {
  BRIDGE_AUTH_TIMEOUT_MS,
  createPermissionBroker,
  MAX_BRIDGE_CONNECTIONS,
  MAX_PENDING_QUESTIONS,
  type PermissionBroker,
  type PermissionQuestion,
} from '../../lib/permission/broker.ts';
import {
  BRIDGE_ENV,
  BRIDGE_TOOL,
  bridgeCommandBeside,
  getBridgeCommand,
  withPermissionBridge,
  type BridgeCommand,
} from '../../lib/permission/spec.ts';
import { attachAskHost } from '../../lib/permission/attach.ts';
import type { PreparedRun } from '../../lib/runs/execute.ts';
import { SUPERVISOR_ARGV_FLAG } from '../../lib/supervisor/parent/supervisor-command.ts';
import { specBundle } from '../helpers/bundle.ts';
import { MAX_QUESTION_INPUT_CHARS } from '../../lib/permission/wire.ts';
import { pollUntil } from '../helpers/poll.ts';
import { createManualClock } from '../helpers/manual-clock.ts';
import { at, callToolResultOf, objs, parseObj, rpcError, rpcResult } from '../helpers/typed-results.ts';

type Json = Record<string, unknown>;
const base = mkdtempSync(join(tmpdir(), 'crm-perm-spec-'));
after(() => rmSync(base, { recursive: true, force: true }));

const newBroker = (boundMs = 30_000): PermissionBroker =>
  createPermissionBroker({ clock: systemClock, random: (n) => randomBytes(n), boundMs, baseDir: base });

interface Bridge {
  readonly child: ChildProcessWithoutNullStreams;
  request(method: string, params?: Json, id?: string | number): Promise<Json>;
  notify(method: string, params: Json): void;
  close(): Promise<void>;
}

/** Starts the bridge exactly as the nested CLI would: the command of getBridgeCommand(), env from the wiring. */
function startBridge(env: Record<string, string>, command: BridgeCommand = getBridgeCommand()): Bridge {
  const child = spawn(command.file, [...command.args], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const waiting = new Map<string | number, (m: Json) => void>();
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const message = parseObj(buffered.slice(0, nl), 'a bridge stdout line');
      buffered = buffered.slice(nl + 1);
      const id = message['id'];
      if (typeof id !== 'string' && typeof id !== 'number') continue; // a notification: nothing waits for it
      waiting.get(id)?.(message);
      waiting.delete(id);
    }
  });
  let seq = 100;
  return {
    child,
    request(method, params = {}, id = (seq += 1)) {
      const answer = new Promise<Json>((resolve) => waiting.set(id, resolve));
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return answer;
    },
    notify(method, params) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT');
        await once(child, 'exit');
      }
    },
  };
}

const envFor = (broker: PermissionBroker): Record<string, string> => ({
  [BRIDGE_ENV.socket]: broker.socketPath,
  [BRIDGE_ENV.token]: broker.token,
  [BRIDGE_ENV.boundMs]: String(broker.boundMs),
});

const INPUT = { command: 'touch fake-tool-marker.txt', description: 'Create a marker file' };
const ask = (bridge: Bridge, input: Json = INPUT, id?: number): Promise<Json> =>
  bridge.request(
    'tools/call',
    { name: BRIDGE_TOOL, arguments: { tool_name: 'Bash', input, tool_use_id: 'toolu_1' }, _meta: { 'claudecode/toolUseId': 'toolu_1' } },
    id,
  );

function nextQuestion(broker: PermissionBroker): Promise<PermissionQuestion> {
  return new Promise((resolve) => broker.onQuestion(resolve));
}

/** What the CLI parses: exactly one text block holding the JSON decision, and nothing else. */
function decisionOf(response: Json): Json {
  const result = rpcResult(response);
  assert.deepEqual(Object.keys(result), ['content'], 'no structuredContent, no isError');
  const { content } = callToolResultOf(result);
  assert.equal(content.length, 1);
  assert.equal(content[0]?.type, 'text');
  return parseObj(content[0]!.text, 'the decision');
}

describe('permission bridge and broker', () => {
  it('speaks the handshake the pinned CLI performs: discover probe refused, initialize, one hidden tool', async () => {
    const broker = newBroker();
    const bridge = startBridge(envFor(broker));
    try {
      const probe = await bridge.request('server/discover', {}, 'server-discover-probe-1');
      assert.equal(rpcError(probe).code, -32601, 'the probe gets an error, never silence');
      const init = await bridge.request(
        'initialize',
        { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'claude-code', version: '2.1.332' } },
        0,
      );
      assert.equal(rpcResult(init)['protocolVersion'], '2025-11-25');
      bridge.notify('notifications/initialized', {});
      const tools = objs(rpcResult(await bridge.request('tools/list'))['tools'], 'tools');
      assert.deepEqual(
        tools.map((t) => t['name']),
        [BRIDGE_TOOL],
      );
    } finally {
      await bridge.close();
      broker.close();
    }
  });

  it('allow: the question carries tool, tool_use_id and the exact input; the answer echoes the input unchanged', async () => {
    const broker = newBroker();
    const bridge = startBridge(envFor(broker));
    try {
      const asked = nextQuestion(broker);
      const response = ask(bridge);
      const q = await asked;
      assert.deepEqual([q.tool_name, q.tool_use_id, q.input, q.input_truncated], ['Bash', 'toolu_1', JSON.stringify(INPUT), false]);
      assert.deepEqual(
        broker.pending().map((p) => p.question_id),
        [q.question_id],
      );
      broker.answer(q.question_id, { behavior: 'allow' });
      assert.deepEqual(decisionOf(await response), { behavior: 'allow', updatedInput: INPUT });
      assert.deepEqual(broker.pending(), []);
      assert.throws(() => broker.answer(q.question_id, { behavior: 'allow' }), {
        code: 'permission_question_not_pending',
        message: /already answered/,
      });
      assert.equal(broker.decided().questions[0]?.late_answer, undefined, 'a second answer from the person is not a late one');
    } finally {
      await bridge.close();
      broker.close();
    }
  });

  it('deny: the reason reaches the model in the native deny shape', async () => {
    const broker = newBroker();
    const bridge = startBridge(envFor(broker));
    try {
      const asked = nextQuestion(broker);
      const response = ask(bridge);
      broker.answer((await asked).question_id, { behavior: 'deny', reason: 'no' });
      assert.deepEqual(decisionOf(await response), { behavior: 'deny', message: 'The person at the MCP client denied this tool use: no' });
      assert.equal(broker.decided().questions[0]?.decided_by, 'host');
    } finally {
      await bridge.close();
      broker.close();
    }
  });

  it('no answer within the bound: denied by the broker, recorded as timeout', async () => {
    const broker = newBroker(300);
    const bridge = startBridge(envFor(broker));
    try {
      const asked = nextQuestion(broker);
      const started = performance.now();
      const response = ask(bridge);
      await asked;
      const decision = decisionOf(await response);
      assert.equal(decision['behavior'], 'deny');
      assert.match(String(decision['message']), /no answer from the host/);
      assert.ok(performance.now() - started >= 290, 'not before the bound');
      assert.equal(broker.decided().questions[0]?.decided_by, 'timeout');
    } finally {
      await bridge.close();
      broker.close();
    }
  });

  it('the run ends while asking: the broker closes, the question is denied, the private directory is gone', async () => {
    const broker = newBroker();
    const dir = dirname(broker.socketPath);
    assert.equal(statSync(dir).mode & 0o777, 0o700, 'the socket lives in a 0700 directory');
    const bridge = startBridge(envFor(broker));
    try {
      const asked = nextQuestion(broker);
      const response = ask(bridge);
      await asked;
      broker.close();
      assert.equal(decisionOf(await response)['behavior'], 'deny');
      assert.equal(broker.decided().questions[0]?.decided_by, 'closed');
      assert.equal(existsSync(dir), false);
    } finally {
      await bridge.close();
    }
  });

  it('an unreachable broker: every question is denied at once', async () => {
    const bridge = startBridge({
      [BRIDGE_ENV.socket]: join(base, 'absent', 'bridge.sock'),
      [BRIDGE_ENV.token]: 'x',
      [BRIDGE_ENV.boundMs]: '60000',
    });
    try {
      const decision = decisionOf(await ask(bridge));
      assert.equal(decision['behavior'], 'deny');
    } finally {
      await bridge.close();
    }
  });

  it('a wrong token: the broker drops the connection, nothing becomes a question, the bridge denies', async () => {
    const broker = newBroker();
    const bridge = startBridge({ ...envFor(broker), [BRIDGE_ENV.token]: 'not-the-token' });
    try {
      const decision = decisionOf(await ask(bridge));
      assert.equal(decision['behavior'], 'deny');
      assert.deepEqual(broker.pending(), []);
      assert.deepEqual(broker.decided().questions, []);
    } finally {
      await bridge.close();
      broker.close();
    }
  });

  it('a call the CLI withdraws (notifications/cancelled) is no longer pending and cannot be answered', async () => {
    const broker = newBroker();
    const bridge = startBridge(envFor(broker));
    try {
      const asked = nextQuestion(broker);
      void ask(bridge, INPUT, 7);
      const q = await asked;
      bridge.notify('notifications/cancelled', { requestId: 7, reason: 'SdkError: Request timed out' });
      await pollUntil('the question to be withdrawn', () => broker.pending().length === 0, { timeoutMs: 10_000, intervalMs: 1 });
      assert.equal(broker.decided().questions[0]?.decided_by, 'withdrawn');
      assert.throws(() => broker.answer(q.question_id, { behavior: 'allow' }), {
        code: 'permission_question_not_pending',
        message: /withdrew the call.*not used/,
      });
      assert.throws(() => broker.answer(q.question_id, { behavior: 'deny' }), { code: 'permission_question_not_pending' });
      assert.deepEqual(
        broker.decided().questions[0]?.late_answer?.behavior,
        'allow',
        'the first late answer is kept for the result, never acted on',
      );
    } finally {
      await bridge.close();
      broker.close();
    }
  });

  it('the socket carries no answers: a decision sent to the broker drops that connection and answers nothing', async () => {
    const broker = newBroker();
    const bridge = startBridge(envFor(broker));
    try {
      const asked = nextQuestion(broker);
      void ask(bridge);
      const q = await asked;
      const intruder = connect(broker.socketPath);
      await once(intruder, 'connect');
      intruder.write(
        `${JSON.stringify({ t: 'hello', token: broker.token })}\n${JSON.stringify({ t: 'decision', id: 'q1', behavior: 'allow', message: '' })}\n`,
      );
      await once(intruder, 'close');
      assert.deepEqual(
        broker.pending().map((p) => p.question_id),
        [q.question_id],
        'still pending: only answer() decides',
      );
    } finally {
      await bridge.close();
      broker.close();
    }
  });

  it(`at most ${MAX_PENDING_QUESTIONS} questions wait; the next is denied as overflow`, async () => {
    const broker = newBroker();
    const client = connect(broker.socketPath);
    try {
      await once(client, 'connect');
      let received = '';
      const firstLine = new Promise<void>((resolve) =>
        client.on('data', (chunk: Buffer) => {
          received += chunk.toString('utf8');
          if (received.includes('\n')) resolve();
        }),
      );
      const lines = [JSON.stringify({ t: 'hello', token: broker.token })];
      for (let i = 0; i <= MAX_PENDING_QUESTIONS; i += 1)
        lines.push(JSON.stringify({ t: 'ask', id: `q${i}`, tool_name: 'Bash', input: { i }, tool_use_id: `t${i}` }));
      client.write(`${lines.join('\n')}\n`);
      await firstLine;
      assert.equal(broker.pending().length, MAX_PENDING_QUESTIONS);
      assert.deepEqual(JSON.parse(received.trim()), {
        t: 'decision',
        id: `q${MAX_PENDING_QUESTIONS}`,
        behavior: 'deny',
        message: `claude-run-mcp: more than ${MAX_PENDING_QUESTIONS} questions waiting; denied.`,
      });
      assert.equal(broker.decided().questions[0]?.decided_by, 'overflow');
    } finally {
      client.destroy();
      broker.close();
    }
  });

  it(`a large input is shown cut at ${MAX_QUESTION_INPUT_CHARS} characters with its full size`, async () => {
    const broker = newBroker();
    const bridge = startBridge(envFor(broker));
    try {
      const asked = nextQuestion(broker);
      const big = { content: 'é'.repeat(10_000) };
      const response = ask(bridge, big);
      const q = await asked;
      assert.equal(q.input_truncated, true);
      assert.equal(q.input.length, MAX_QUESTION_INPUT_CHARS + 1);
      assert.equal(q.input_bytes, Buffer.byteLength(JSON.stringify(big), 'utf8'));
      broker.answer(q.question_id, { behavior: 'allow' });
      assert.deepEqual(
        decisionOf(await response),
        { behavior: 'allow', updatedInput: big },
        'the allowed input is the whole input, not the preview',
      );
    } finally {
      await bridge.close();
      broker.close();
    }
  });

  it('the built bundle serves the bridge role; the compiled library finds it beside its supervisor command', async () => {
    const bundleFile = await specBundle();
    const command = bridgeCommandBeside({ file: process.execPath, args: [bundleFile, SUPERVISOR_ARGV_FLAG] }, SUPERVISOR_ARGV_FLAG);
    assert.deepEqual(command, { file: process.execPath, args: [bundleFile, '__permission-bridge'] });
    assert.equal(
      bridgeCommandBeside({ file: process.execPath, args: ['--import', 'tsx', 'lib/supervisor/child/main.ts'] }, SUPERVISOR_ARGV_FLAG),
      null,
      'from source: the default command',
    );
    assert.deepEqual(getBridgeCommand(`file://${bundleFile}`).args, [bundleFile, '__permission-bridge']);
    const broker = newBroker();
    const bridge = startBridge(envFor(broker), command!);
    try {
      const init = await bridge.request(
        'initialize',
        { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'claude-code', version: '2.1.332' } },
        0,
      );
      assert.equal(rpcResult(init)['protocolVersion'], '2025-11-25');
      const asked = nextQuestion(broker);
      const response = ask(bridge);
      broker.answer((await asked).question_id, { behavior: 'allow' });
      assert.deepEqual(decisionOf(await response), { behavior: 'allow', updatedInput: INPUT });
    } finally {
      await bridge.close();
      broker.close();
    }
  });

  it('wiring: flags appended (the prompt is never in argv), the mode becomes default only when none was chosen, the CLI gets a backstop', () => {
    const argv = { args: ['-p', '--permission-mode', 'dontAsk'], stdin: 'hi', streamInput: false };
    const wiring = {
      command: { file: '/node', args: ['b.mjs', '__permission-bridge'] },
      boundMs: 1000,
      useDefaultMode: true,
      flags: { flag: '--permission-prompt-tool', mcp_config_flag: '--mcp-config' },
    };
    const wired = withPermissionBridge(argv, wiring);
    assert.deepEqual(wired.args.slice(0, 3), ['-p', '--permission-mode', 'default']);
    assert.deepEqual(wired.args.slice(-2), ['--permission-prompt-tool', 'mcp__claude_run_mcp_permission__approve']);
    const config = parseObj(wired.args[wired.args.indexOf('--mcp-config') + 1]!, 'the --mcp-config value');
    assert.equal(at(config, 'mcpServers', 'claude_run_mcp_permission', 'timeout'), 16_000);
    assert.deepEqual(
      at(config, 'mcpServers', 'claude_run_mcp_permission', 'env'),
      { [BRIDGE_ENV.boundMs]: '1000' },
      'no socket path, no token on the command line',
    );
    const kept = withPermissionBridge({ args: ['-p', '--permission-mode', 'acceptEdits'], stdin: 'big prompt', streamInput: false }, {
      ...wiring,
      useDefaultMode: false,
    });
    assert.equal(kept.args[2], 'acceptEdits');
    assert.equal(kept.args.at(-1), 'mcp__claude_run_mcp_permission__approve', 'flags appended');
    assert.equal(kept.stdin, 'big prompt');
  });

  it(`a connection that does not authenticate within ${BRIDGE_AUTH_TIMEOUT_MS} ms is closed: idle connections cannot lock a bridge out`, async () => {
    const clock = createManualClock();
    const broker = createPermissionBroker({ clock, random: (n) => randomBytes(n), boundMs: 600_000, baseDir: base });
    const open: ReturnType<typeof connect>[] = [];
    const dial = async (): Promise<ReturnType<typeof connect>> => {
      const socket = connect(broker.socketPath);
      open.push(socket);
      socket.on('error', () => {});
      await once(socket, 'connect');
      return socket;
    };
    try {
      // Two idle connections take both slots (each accepted one arms its auth timer); a third is refused.
      const idle = [];
      for (let i = 0; i < MAX_BRIDGE_CONNECTIONS; i += 1) idle.push(await dial());
      await pollUntil('both idle connections accepted', () => clock.pending() === MAX_BRIDGE_CONNECTIONS, {
        timeoutMs: 10_000,
        intervalMs: 1,
      });
      const refused = await dial();
      await once(refused, 'close');
      clock.advance(BRIDGE_AUTH_TIMEOUT_MS - 1);
      // One ms before the bound the first idle connection is still served: it authenticates and asks.
      const asked = nextQuestion(broker);
      idle[0]!.write(
        `${JSON.stringify({ t: 'hello', token: broker.token })}\n${JSON.stringify({ t: 'ask', id: 'q1', tool_name: 'Bash', input: {}, tool_use_id: 't1' })}\n`,
      );
      await asked;
      clock.advance(1);
      await once(idle[1]!, 'close');
      assert.equal(idle[0]!.destroyed, false, 'an authenticated connection has no auth deadline');
      // The freed slot serves a re-spawned bridge.
      const respawned = await dial();
      const again = nextQuestion(broker);
      respawned.write(
        `${JSON.stringify({ t: 'hello', token: broker.token })}\n${JSON.stringify({ t: 'ask', id: 'q1', tool_name: 'Bash', input: {}, tool_use_id: 't2' })}\n`,
      );
      assert.equal((await again).tool_use_id, 't2');
      assert.equal(broker.pending().length, 2);
    } finally {
      for (const socket of open) socket.destroy();
      broker.close();
    }
  });

  it('attach: the socket path and token reach the native through its environment, never its argv', () => {
    const request = { askHost: { timeoutMs: 1000, defaultMode: false } } as unknown as PreparedRun['request'];
    const prepared: PreparedRun = { request, bin: '/bin/claude', argv: { args: ['-p'], stdin: 'hi', streamInput: false }, env: { OWN: '1' } };
    const { prepared: wired, broker } = attachAskHost(prepared, {
      clock: systemClock,
      random: (n) => randomBytes(n),
      flags: { flag: '--permission-prompt-tool', mcp_config_flag: '--mcp-config' },
      baseDir: base,
    });
    try {
      assert.ok(broker);
      assert.deepEqual(wired.env, { OWN: '1', [BRIDGE_ENV.socket]: broker.socketPath, [BRIDGE_ENV.token]: broker.token });
      const line = wired.argv.args.join(' ');
      for (const secret of [broker.token, broker.socketPath, BRIDGE_ENV.token, BRIDGE_ENV.socket])
        assert.equal(line.includes(secret), false, secret);
    } finally {
      broker?.close();
    }
  });
});
