// The real pinned binary, without the adapter, against the loopback fake: proves the harness itself.
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { lastToolResult, lastUserText, scenarioCustomHeader, startFakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import type { FakeAnthropic, Scenario } from '../../fixtures/fake-anthropic/server.ts';
import { createNativeSandbox, pollUntilGone } from '../helpers/native-env.ts';
import type { NativeSandbox, NativeSandboxOptions } from '../helpers/native-env.ts';
import { networkView } from '../helpers/netns.ts';
import { pollUntil } from '../helpers/poll.ts';
import { at, lookup, objs } from '../helpers/typed-results.ts';
import { STREAM_JSON_ARGS, kinds, resultOf, runClaude, startClaude } from './direct-claude.ts';

/** A claude that exited must be gone already; this only absorbs /proc lag. */
const LEAK_POLL_MS = 2_000;

async function inSandbox(
  t: TestContext,
  scenario: Scenario,
  options: Omit<NativeSandboxOptions, 'baseUrl'>,
  body: (fake: FakeAnthropic, sandbox: NativeSandbox) => Promise<void>,
): Promise<void> {
  const fake = await startFakeAnthropic({ scenario });
  const sandbox = await createNativeSandbox({ baseUrl: fake.url, ...options });
  try {
    await body(fake, sandbox);
    const left = await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS);
    assert.deepEqual(left.map((p) => `${p.pid} ${p.cmdline.join(' ')}`), [], 'processes left behind');
  } finally {
    await fake.close();
    await sandbox.cleanup();
    assert.equal(existsSync(sandbox.root), false, 'sandbox removed');
    t.diagnostic(`sandbox ${sandbox.root} removed`);
  }
}

test('the network is loopback-only when the runner says it isolated us', (t) => {
  const view = networkView(process.env);
  t.diagnostic(`interfaces: ${view.interfaces.join(',')}; netns-run claim: ${view.runnerClaim ?? 'not used'}`);
  if (view.runnerClaim === '1') assert.deepEqual(view.interfaces, ['lo']);
  else assert.ok(view.interfaces.includes('lo'));
});

test('a plain text turn: init … result/success with the fake text, exit 0', async (t) => {
  const text = 'Hello from the loopback fake.';
  await inSandbox(t, { kind: 'text', text }, {}, async (fake, sandbox) => {
    const run = await runClaude(sandbox, [...STREAM_JSON_ARGS, '--', 'say hi']);
    assert.equal(run.code, 0, run.stderr);
    const seen = kinds(run);
    assert.equal(seen[0], 'system/init');
    assert.equal(seen.at(-1), 'result/success');
    for (const kind of ['system/status', 'stream_event/message_start', 'stream_event/content_block_delta', 'assistant', 'stream_event/message_stop']) {
      assert.ok(seen.includes(kind), `missing ${kind} in ${seen.join(' ')}`);
    }
    const init = run.events[0] ?? {};
    assert.equal(init['cwd'], sandbox.cwd);
    assert.equal(init['apiKeySource'], 'ANTHROPIC_API_KEY');
    assert.equal(init['analytics_disabled'], true);
    const result = resultOf(run);
    assert.equal(result['is_error'], false);
    assert.equal(result['result'], text);
    assert.equal(result['num_turns'], 1);
    assert.equal(result['session_id'], init['session_id']);

    const calls = fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages');
    assert.equal(calls.length, 1);
    assert.deepEqual(fake.requests.map((r) => `${r.method} ${r.path}`), ['POST /v1/messages'], 'nothing but the one call');
    const call = calls[0];
    assert.ok(call);
    assert.equal(call.query, '?beta=true');
    assert.equal(call.stream, true);
    assert.equal(call.headers['x-api-key'], sandbox.apiKey);
    assert.equal(call.headers['x-claude-code-session-id'], init['session_id']);
    assert.equal(lastUserText(call.body), 'say hi');
    assert.ok(existsSync(join(sandbox.home, '.claude')), 'the CLI wrote its state into the temp HOME');
    t.diagnostic(`timing: init ${ms(run.initMs)}, result ${ms(run.resultMs)}, exit ${ms(run.exitMs)} after spawn`);
  });
});

test('HTTP 401 (picked by ANTHROPIC_CUSTOM_HEADERS) with no retries: is_error, api_error_status 401, exit 1', async (t) => {
  const options = { customHeaders: [scenarioCustomHeader('http_401')] };
  await inSandbox(t, { kind: 'text' }, options, async (fake, sandbox) => {
    const run = await runClaude(sandbox, [...STREAM_JSON_ARGS, '--', 'say hi']);
    assert.equal(run.code, 1, run.stderr);
    const result = resultOf(run);
    assert.equal(result['subtype'], 'success');
    assert.equal(result['is_error'], true);
    assert.equal(result['api_error_status'], 401);
    assert.equal(result['terminal_reason'], 'api_error');
    assert.match(String(result['result']), /^Failed to authenticate\. API Error: 401 fake 401 from fake-anthropic/);
    const assistant = run.events.find((event) => event['type'] === 'assistant');
    assert.equal(assistant?.['error'], 'authentication_failed');
    assert.deepEqual(fake.requests.map((r) => [r.headers['x-fake-scenario'], r.scenario]), [['http_401', 'http_error']]);
    t.diagnostic(`timing: exit ${ms(run.exitMs)} after spawn`);
  });
});

test('a Bash tool_use under --permission-mode dontAsk is denied and nothing runs', async (t) => {
  const marker = 'fake-tool-marker.txt';
  const scenario: Scenario = { kind: 'tool_use', tool: 'Bash', input: { command: `touch ${marker}`, description: 'Create a marker file' } };
  await inSandbox(t, scenario, {}, async (fake, sandbox) => {
    const run = await runClaude(sandbox, [...STREAM_JSON_ARGS, '--permission-mode', 'dontAsk', '--', 'make a marker']);
    assert.equal(run.code, 0, run.stderr);
    const result = resultOf(run);
    assert.equal(result['is_error'], false);
    assert.equal(result['num_turns'], 2);
    const denials = objs(result['permission_denials'], 'permission_denials');
    assert.equal(denials.length, 1);
    assert.equal(at(denials, 0, 'tool_name'), 'Bash');
    assert.equal(at(denials, 0, 'tool_input', 'command'), `touch ${marker}`);
    assert.ok(kinds(run).includes('system/permission_denied'));
    assert.equal(existsSync(join(sandbox.cwd, marker)), false, 'the denied command did not run');
    const calls = fake.requests.filter((r) => r.path === '/v1/messages');
    assert.equal(calls.length, 2);
    const fed = lastToolResult(calls[1]?.body);
    assert.equal(fed?.isError, true);
    assert.match(fed?.text ?? '', /don't ask mode/);
    assert.equal(result['result'], `Tool finished (is_error=true): ${(fed?.text ?? '').slice(0, 80)}`);
    t.diagnostic(`timing: init ${ms(run.initMs)}, result ${ms(run.resultMs)}, exit ${ms(run.exitMs)} after spawn`);
  });
});

test('control: the same tool_use under acceptEdits really runs (so the marker check above can fail)', async (t) => {
  const marker = 'fake-tool-marker.txt';
  const scenario: Scenario = { kind: 'tool_use', tool: 'Bash', input: { command: `touch ${marker}`, description: 'Create a marker file' } };
  await inSandbox(t, scenario, {}, async (fake, sandbox) => {
    const run = await runClaude(sandbox, [...STREAM_JSON_ARGS, '--permission-mode', 'acceptEdits', '--', 'make a marker']);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(resultOf(run)['permission_denials'], []);
    assert.equal(existsSync(join(sandbox.cwd, marker)), true);
    assert.equal(lastToolResult(fake.requests[1]?.body)?.isError, false);
    t.diagnostic(`timing: result ${ms(run.resultMs)}, exit ${ms(run.exitMs)} after spawn`);
  });
});

test('a stream that hangs after message_start: the live claude is found, SIGINT ends it with an honest result', async (t) => {
  await inSandbox(t, { kind: 'hang' }, {}, async (fake, sandbox) => {
    const started = startClaude(sandbox, [...STREAM_JSON_ARGS, '--', 'say hi']);
    await fake.waitForRequest((r) => r.path === '/v1/messages', 30_000);
    // The fake sent message_start; interrupt only once the CLI has read it (on a busy machine it may not have).
    await pollUntil('the CLI streamed message_start', () => started.events.some((e) => e['type'] === 'stream_event' && lookup(e, 'event', 'type') === 'message_start'), { timeoutMs: 30_000 });
    const live = await sandbox.processes();
    assert.deepEqual(live.filter((p) => p.isBinary).map((p) => p.pid), [started.pid], 'the scan sees the running binary');
    const interruptedAt = performance.now();
    started.kill('SIGINT');
    const run = await started.done;
    t.diagnostic(`SIGINT to exit: ${Math.round(performance.now() - interruptedAt)} ms; exit code ${String(run.code)}`);
    assert.equal(run.code, 0, run.stderr);
    const result = resultOf(run);
    assert.equal(result['subtype'], 'error_during_execution');
    assert.equal(result['is_error'], true);
    assert.equal(result['terminal_reason'], 'aborted_streaming');
  });
});

test('timing: --version and three plain turns (reported, loosely bounded)', async (t) => {
  await inSandbox(t, { kind: 'text' }, {}, async (_fake, sandbox) => {
    const version = await runClaude(sandbox, ['--version']);
    assert.equal(version.code, 0);
    assert.deepEqual(version.plainLines, ['2.1.332 (Claude Code)']);
    t.diagnostic(`claude --version: ${ms(version.exitMs)}`);
    for (let i = 0; i < 3; i += 1) {
      const run = await runClaude(sandbox, [...STREAM_JSON_ARGS, '--', `turn ${i}`]);
      assert.equal(run.code, 0, run.stderr);
      assert.ok(run.initMs !== null && run.resultMs !== null && run.initMs < run.resultMs);
      t.diagnostic(`turn ${i}: init ${ms(run.initMs)}, result ${ms(run.resultMs)}, exit ${ms(run.exitMs)}`);
    }
  });
});

function ms(value: number | null): string {
  return value === null ? 'n/a' : `${Math.round(value)} ms`;
}
