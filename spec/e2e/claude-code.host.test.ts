// The pinned real Claude Code 2.1.332 as the MCP *client* of this server (`claude -p --mcp-config`): the
// loopback fake Messages API makes the outer model call claude_run, whose nested run (the same real
// binary) talks to the same fake. A transparent tap logs the MCP wire between the two.
// Proves: the 2026-07-28 handshake is used (server/discover, no initialize), every request carries the
// modern _meta, the tool result reaches the model, and nothing is left running after the CLI exits.
// With MCP_PROTOCOL_NEGOTIATION=legacy the same flow runs over initialize, on the same server.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { arr, at, isJsonObject, obj, objAt, parseObj, toolResultOf } from '../helpers/typed-results.ts';
import { readWireLog, wireMessages, type WireEntry, type WireMessage } from './wire-tap-log.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import { lastToolResult, promptTag, scenarioByPromptTag, startFakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import type { FakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import { createNativeSandbox, pollUntilGone, realClaudeBin } from '../helpers/native-env.ts';
import type { NativeSandbox } from '../helpers/native-env.ts';
import { specBundle } from '../helpers/bundle.ts';
import { resultOf, runClaude, STREAM_JSON_ARGS } from './direct-claude.ts';
import { describeProcesses, LEAK_POLL_MS } from './adapter-tier.ts';

const TAP = fileURLToPath(new URL('../../fixtures/mcp-wire-tap.mjs', import.meta.url));
const NESTED_REPLY = 'Nested hello from the run the host asked for.';
const FOLLOW_UP = 'The host read the tool result.';
/** Outer CLI start, one tool turn, a nested real run and the follow-up: ~10 s; only a hang gets near this. */
const HOST_DEADLINE_MS = 90_000;

describe('Claude Code 2.1.332 as the MCP client of this server', () => {
  let fake: FakeAnthropic;
  let sandbox: NativeSandbox;
  let bundle: string;
  before(async () => {
    fake = await startFakeAnthropic({
      scenario: scenarioByPromptTag({
        host_call: {
          kind: 'tool_use',
          tool: 'mcp__crm__claude_run',
          input: { prompt: `say hi ${promptTag('nested')}` },
          followUpText: FOLLOW_UP,
        },
        nested: { kind: 'text', text: NESTED_REPLY },
      }),
    });
    sandbox = await createNativeSandbox({ baseUrl: fake.url });
    // The shipped single-file bundle: it answers the probe within ~100 ms of spawn. Claude Code gives
    // server/discover ~2 s before falling back to initialize, which `node --import tsx` can exceed on a busy machine.
    bundle = await specBundle();
  });
  after(async () => {
    try {
      assert.deepEqual(describeProcesses(await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS)), []);
    } finally {
      await fake.close();
      await sandbox.cleanup();
    }
  });

  /** Runs the outer CLI once with the server behind the tap; returns the CLI run and the logged wire. */
  async function hostRun(
    label: string,
    extraEnv: Record<string, string> = {},
  ): Promise<{ run: Awaited<ReturnType<typeof runClaude>>; wire: WireEntry[]; messages: WireMessage[] }> {
    const log = join(sandbox.root, `${label}-wire.jsonl`);
    const config = join(sandbox.root, `${label}-mcp.json`);
    const server = [process.execPath, bundle, '--claude-bin', realClaudeBin()];
    await writeFile(
      config,
      JSON.stringify({ mcpServers: { crm: { type: 'stdio', command: process.execPath, args: [TAP, log, ...server] } } }),
    );
    // Tool search off: MCP tools go to the model directly, so the fake's one tool_use can name ours.
    const env = { ...sandbox.env, ENABLE_TOOL_SEARCH: 'false', ...extraEnv };
    const run = await runClaude(
      { ...sandbox, env },
      [
        ...STREAM_JSON_ARGS,
        '--mcp-config',
        config,
        '--strict-mcp-config',
        '--allowedTools',
        'mcp__crm__claude_run',
        '--',
        `call the tool ${label} ${promptTag('host_call')}`,
      ],
      HOST_DEADLINE_MS,
    );
    assert.ok(existsSync(log), `the server was never started; stderr: ${run.stderr.slice(-2000)}`);
    const wire = readWireLog(log);
    const messages = wireMessages(wire);
    return { run, wire, messages };
  }

  /** The model saw the run's result: the follow-up request carries the tool_result with the nested reply. */
  function assertResultReachedModel(label: string): string {
    const followUp = fake.requests.filter(
      (r) => r.path === '/v1/messages' && JSON.stringify(r.body).includes(label) && lastToolResult(r.body) !== undefined,
    );
    assert.equal(followUp.length, 1, 'one follow-up model request carried the tool result');
    const seen = lastToolResult(followUp[0]!.body)!;
    assert.equal(seen.isError, false, seen.text.slice(0, 500));
    // Claude Code 2.1.332 hands the model the structuredContent (as JSON) when a result has one.
    const body = objAt(parseObj(seen.text, 'the tool result the model saw'), 'result');
    assert.equal(body['result'], NESTED_REPLY);
    assert.equal(body['cleanup_confirmed'], true);
    assert.equal(
      fake.requests.filter(
        (r) =>
          r.path === '/v1/messages' &&
          JSON.stringify(r.body).includes(promptTag('nested')) &&
          lastToolResult(r.body) === undefined &&
          !JSON.stringify(r.body).includes(label),
      ).length >= 1,
      true,
      'the nested run reached the fake',
    );
    return String(body['run_id']);
  }

  it('modern era: server/discover, no initialize, _meta on every request, the result reaches the model, nothing left', async () => {
    const { run, wire, messages } = await hostRun('modern');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.equal(resultOf(run)['result'], FOLLOW_UP);

    const requests = messages.filter((m) => m.dir === 'c2s' && typeof m.msg['method'] === 'string');
    const methods = requests.map((m) => m.msg['method']);
    assert.equal(methods[0], 'server/discover', 'the probe comes first');
    assert.equal(methods.includes('initialize'), false, `no initialize on the wire: ${methods.join(', ')}`);
    assert.equal(methods.includes('notifications/initialized'), false);
    assert.ok(methods.includes('tools/list') && methods.includes('tools/call'), methods.join(', '));
    for (const request of requests) {
      const meta = objAt(request.msg, 'params', '_meta');
      assert.equal(
        meta['io.modelcontextprotocol/protocolVersion'],
        '2026-07-28',
        `${String(request.msg['method'])} carries the modern date`,
      );
      const caps = objAt(meta, 'io.modelcontextprotocol/clientCapabilities');
      assert.equal(
        isJsonObject(caps['extensions']) ? caps['extensions']['io.modelcontextprotocol/tasks'] : undefined,
        undefined,
        'print mode never declares the tasks extension',
      );
    }
    const answer = (id: unknown): JsonObject =>
      obj(messages.find((m) => m.dir === 's2c' && m.msg['id'] === id)?.msg, `the answer to ${String(id)}`);
    const discover = objAt(answer(requests[0]!.msg['id']), 'result');
    assert.ok(arr(discover['supportedVersions']).includes('2026-07-28'));
    const call = requests.find((m) => m.msg['method'] === 'tools/call')!;
    assert.equal(at(call.msg, 'params', 'name'), 'claude.run', "the model's mcp__crm__claude_run reached claude.run");
    const callResult = objAt(answer(call.msg['id']), 'result');
    assert.equal(callResult['resultType'], 'complete', 'without the extension the call is synchronous');
    assert.equal(callResult['isError'], false);
    const runId = assertResultReachedModel('modern');
    assert.equal(toolResultOf(callResult)['run_id'], runId);

    // Claude Code ends the server with a signal, stdin left open; the server exits 0 by itself.
    const signals = wire.filter((e) => e.signal !== undefined && e.exit === undefined).map((e) => e.signal);
    assert.ok(signals.length >= 1 && signals[0] === 'SIGINT', `the host sent SIGINT first: ${JSON.stringify(signals)}`);
    const exit = wire.find((e) => e.exit !== undefined);
    assert.deepEqual(exit && { exit: exit.exit, signal: exit.signal }, { exit: 0, signal: null }, 'the server exited 0 on its own');
    assert.deepEqual(
      describeProcesses(await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS)),
      [],
      'nothing left after the CLI exited',
    );
  });

  it('legacy negotiation on the same server (MCP_PROTOCOL_NEGOTIATION=legacy): initialize, same result', async () => {
    const { run, messages } = await hostRun('legacy', { MCP_PROTOCOL_NEGOTIATION: 'legacy' });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.equal(resultOf(run)['result'], FOLLOW_UP);
    const requests = messages.filter((m) => m.dir === 'c2s' && typeof m.msg['method'] === 'string');
    assert.equal(requests[0]!.msg['method'], 'initialize');
    assert.equal(
      requests.some((m) => m.msg['method'] === 'server/discover'),
      false,
    );
    const init = objAt(messages.find((m) => m.dir === 's2c' && m.msg['id'] === requests[0]!.msg['id'])?.msg, 'result');
    assert.equal(init['protocolVersion'], '2025-11-25');
    const call = requests.find((m) => m.msg['method'] === 'tools/call')!;
    const callResult = objAt(messages.find((m) => m.dir === 's2c' && m.msg['id'] === call.msg['id'])?.msg, 'result');
    assert.equal(callResult['resultType'], undefined, 'legacy results are unchanged');
    assertResultReachedModel('legacy');
    assert.deepEqual(describeProcesses(await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS)), []);
  });
});
