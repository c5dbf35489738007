import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_TEXT, SCENARIO_HEADER, lastUserText, scenarioCustomHeader, startFakeAnthropic,
} from '../../fixtures/fake-anthropic/server.ts';
import type { FakeAnthropic, FakeAnthropicOptions } from '../../fixtures/fake-anthropic/server.ts';
import { call } from './http-client.ts';
import { at, lookup, objAt, objs, parseObj } from '../helpers/typed-results.ts';

const ask = (text: string, stream = true): Record<string, unknown> => ({
  model: 'claude-test-1', max_tokens: 10, stream,
  messages: [{ role: 'user', content: [{ type: 'text', text: '<system-reminder>x</system-reminder>' }, { type: 'text', text }] }],
});

async function withFake(options: FakeAnthropicOptions, body: (fake: FakeAnthropic) => Promise<void>): Promise<void> {
  const fake = await startFakeAnthropic(options);
  try {
    await body(fake);
  } finally {
    await fake.close();
  }
}

const types = (events: ReadonlyArray<Record<string, unknown>>): unknown[] => events.map((event) => event['type']);
const deltaText = (events: ReadonlyArray<Record<string, unknown>>): string => events
  .map((event) => lookup(event, 'delta', 'text') ?? '').join('');

test('listens on 127.0.0.1 with an ephemeral port', async () => {
  await withFake({}, async (fake) => {
    assert.match(fake.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(fake.url, 'http://127.0.0.1:0');
  });
});

test('streams a text reply as the real API does and records the request', async () => {
  await withFake({ scenario: { kind: 'text', text: 'Hello there, tester.', chunkChars: 5 } }, async (fake) => {
    const answer = await call(fake.url, { body: ask('say hi'), headers: { 'x-api-key': 'sk-ant-fake-1' } });
    assert.equal(answer.status, 200);
    assert.match(String(answer.headers['content-type']), /^text\/event-stream/);
    assert.deepEqual(types(answer.events), [
      'message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_delta',
      'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop',
    ]);
    assert.equal(deltaText(answer.events), 'Hello there, tester.');
    assert.equal(at(answer.events, 7, 'delta', 'stop_reason'), 'end_turn');
    assert.equal(at(answer.events, 7, 'usage', 'output_tokens'), 4);
    assert.equal(at(answer.events, 0, 'message', 'model'), 'claude-test-1');
    assert.equal(fake.requests.length, 1);
    const recorded = fake.requests[0];
    assert.ok(recorded);
    assert.equal(recorded.method, 'POST');
    assert.equal(recorded.path, '/v1/messages');
    assert.equal(recorded.query, '?beta=true');
    assert.equal(recorded.stream, true);
    assert.equal(recorded.scenario, 'text');
    assert.equal(recorded.headers['x-api-key'], 'sk-ant-fake-1');
    assert.equal(lastUserText(recorded.body), 'say hi');
    assert.equal(answer.headers['request-id'], `req_fake_${recorded.seq}`);
  });
});

test('answers without stream:true with one whole JSON message', async () => {
  await withFake({}, async (fake) => {
    const answer = await call(fake.url, { body: ask('say hi', false) });
    assert.equal(answer.status, 200);
    const message = parseObj(answer.text, 'the message');
    assert.equal(message['type'], 'message');
    assert.deepEqual(message['content'], [{ type: 'text', text: DEFAULT_TEXT }]);
    assert.equal(message['stop_reason'], 'end_turn');
    assert.equal(fake.requests[0]?.stream, false);
  });
});

test('tool_use asks for the tool first, then answers the tool_result with text', async () => {
  const input = { command: 'touch marker', description: 'mark' };
  await withFake({ scenario: { kind: 'tool_use', tool: 'Bash', input } }, async (fake) => {
    const first = await call(fake.url, { body: ask('run it') });
    const starts = first.events.filter((event) => event['type'] === 'content_block_start')
      .map((event) => objAt(event, 'content_block'));
    assert.deepEqual(starts.map((block) => block['type']), ['text', 'tool_use']);
    assert.equal(starts[1]?.['name'], 'Bash');
    const json = first.events.map((event) => lookup(event, 'delta', 'partial_json') ?? '').join('');
    assert.deepEqual(JSON.parse(json), input);
    assert.equal(at(first.events.at(-2), 'delta', 'stop_reason'), 'tool_use');

    const followUp = {
      ...ask('run it'),
      messages: [
        { role: 'user', content: 'run it' },
        { role: 'assistant', content: [{ type: 'tool_use', id: starts[1]?.['id'], name: 'Bash', input }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: starts[1]?.['id'], content: 'denied by test', is_error: true }] },
        { role: 'system', content: 'env' },
      ],
    };
    const second = await call(fake.url, { body: followUp });
    assert.equal(deltaText(second.events), 'Tool finished (is_error=true): denied by test');
    const whole = await call(fake.url, { body: { ...ask('run it', false) } });
    assert.deepEqual(objs(parseObj(whole.text)['content'], 'content').map((block) => block['type']), ['text', 'tool_use']);
  });
});

for (const [status, type] of [[401, 'authentication_error'], [429, 'rate_limit_error'], [500, 'api_error'], [529, 'overloaded_error']] as const) {
  test(`HTTP ${status} answers with the Anthropic error body (${type})`, async () => {
    await withFake({ scenario: { kind: 'http_error', status, shouldRetry: false, retryAfterSeconds: 2 } }, async (fake) => {
      const answer = await call(fake.url, { body: ask('x') });
      assert.equal(answer.status, status);
      const body = parseObj(answer.text, 'the error body');
      assert.equal(body['type'], 'error');
      assert.equal(at(body, 'error', 'type'), type);
      assert.equal(at(body, 'error', 'message'), `fake ${status} from fake-anthropic`);
      assert.equal(body['request_id'], answer.headers['request-id']);
      assert.equal(answer.headers['x-should-retry'], 'false');
      assert.equal(answer.headers['retry-after'], '2');
    });
  });
}

test('the x-fake-scenario header (preset or JSON) wins over the configured scenario', async () => {
  await withFake({ scenario: { kind: 'text', text: 'configured' } }, async (fake) => {
    const plain = await call(fake.url, { body: ask('x') });
    assert.equal(deltaText(plain.events), 'configured');
    const preset = await call(fake.url, { body: ask('x'), headers: { [SCENARIO_HEADER]: 'http_401' } });
    assert.equal(preset.status, 401);
    assert.equal(preset.headers['x-should-retry'], undefined);
    const json = scenarioCustomHeader({ kind: 'text', text: 'from: json' }).slice(`${SCENARIO_HEADER}: `.length);
    const fromJson = await call(fake.url, { body: ask('x'), headers: { [SCENARIO_HEADER]: json } });
    assert.equal(deltaText(fromJson.events), 'from: json');
    const unknown = await call(fake.url, { body: ask('x'), headers: { [SCENARIO_HEADER]: 'no_such_preset' } });
    assert.equal(unknown.status, 400);
    assert.match(unknown.text, /unknown x-fake-scenario value: no_such_preset/);
    assert.deepEqual(fake.requests.map((r) => r.scenario), ['text', 'http_error', 'text', null]);
  });
});

test('a chooser picks per request and setScenario replaces it', async () => {
  await withFake({ scenario: (request) => ({ kind: 'text', text: `seq ${request.seq}` }) }, async (fake) => {
    assert.equal(deltaText((await call(fake.url, { body: ask('x') })).events), 'seq 1');
    fake.setScenario({ kind: 'http_error', status: 529 });
    assert.equal((await call(fake.url, { body: ask('x') })).status, 529);
  });
});
