import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import type { FakeAnthropic, FakeAnthropicOptions } from '../../fixtures/fake-anthropic/server.ts';
import { call } from './http-client.ts';
import { at, parseObj } from '../helpers/typed-results.ts';

const ask = (stream = true): Record<string, unknown> => ({ model: 'm', max_tokens: 10, stream, messages: [{ role: 'user', content: 'x' }] });

async function withFake(options: FakeAnthropicOptions, body: (fake: FakeAnthropic) => Promise<void>): Promise<void> {
  const fake = await startFakeAnthropic(options);
  try {
    await body(fake);
  } finally {
    await fake.close();
  }
}

const countDeltas = (events: ReadonlyArray<Record<string, unknown>>): number =>
  events.filter((event) => event['type'] === 'content_block_delta').length;

test('cut (destroy) resets the connection after the given number of deltas', async () => {
  await withFake({ scenario: { kind: 'cut', afterDeltas: 2 } }, async (fake) => {
    const answer = await call(fake.url, { body: ask() });
    assert.equal(answer.status, 200);
    assert.equal(countDeltas(answer.events), 2);
    assert.notEqual(answer.broken, null);
    assert.equal(answer.events.some((event) => event['type'] === 'message_stop'), false);
  });
});

test('cut (end) closes cleanly without message_stop', async () => {
  await withFake({ scenario: { kind: 'cut', afterDeltas: 1, how: 'end' } }, async (fake) => {
    const answer = await call(fake.url, { body: ask() });
    assert.equal(answer.broken, null);
    assert.equal(countDeltas(answer.events), 1);
    assert.equal(answer.events.some((event) => event['type'] === 'message_stop'), false);
  });
});

test('cut: the non-streaming fallback gets the full text, or a cut too with nonStreaming "cut"', async () => {
  await withFake({ scenario: { kind: 'cut' } }, async (fake) => {
    const answer = await call(fake.url, { body: ask(false) });
    assert.equal(answer.status, 200);
    assert.equal(at(parseObj(answer.text), 'content', 0, 'text'), 'Hi! I am a fake Claude.');
    fake.setScenario({ kind: 'cut', nonStreaming: 'cut' });
    await assert.rejects(call(fake.url, { body: ask(false) }), /socket hang up|ECONNRESET/);
  });
});

test('slow: deltas are spaced by deltaDelayMs', async () => {
  const delayMs = 40;
  await withFake({ scenario: { kind: 'text', text: 'abcdef', chunkChars: 2, deltaDelayMs: delayMs } }, async (fake) => {
    const answer = await call(fake.url, { body: ask() });
    const times = answer.events.flatMap((event, i) => (event['type'] === 'content_block_delta' ? [answer.eventTimesMs[i] ?? 0] : []));
    assert.equal(times.length, 3);
    for (let i = 1; i < times.length; i += 1) assert.ok((times[i] ?? 0) - (times[i - 1] ?? 0) >= delayMs - 5, `gap ${i}`);
    assert.equal(answer.events.at(-1)?.['type'], 'message_stop');
  });
});

test('a client that leaves mid slow stream stops it (no write after close)', async () => {
  await withFake({ scenario: { kind: 'text', text: 'x'.repeat(100), chunkChars: 1, deltaDelayMs: 20 } }, async (fake) => {
    const answer = await call(fake.url, {
      body: ask(),
      onEvent: (event) => { if (event['type'] === 'content_block_delta') void fake.close(); },
    });
    assert.ok(countDeltas(answer.events) < 5);
    assert.notEqual(answer.broken, null);
  });
});

test('hang: message_start, then silence until close() ends it', async () => {
  const fake = await startFakeAnthropic({ scenario: { kind: 'hang' } });
  let closed: Promise<void> | undefined;
  const answer = await call(fake.url, {
    body: ask(),
    onEvent: (event) => { if (event['type'] === 'message_start') closed = fake.close(); },
  });
  await closed;
  assert.deepEqual(answer.events.map((event) => event['type']), ['message_start']);
  assert.notEqual(answer.broken, null);
});

test('hang without streaming holds the request until close()', async () => {
  const fake = await startFakeAnthropic({ scenario: { kind: 'hang' } });
  const pending = call(fake.url, { body: ask(false) });
  await fake.waitForRequest();
  await fake.close();
  await assert.rejects(pending, /socket hang up|ECONNRESET/);
});

test('body limit: exactly maxBodyBytes is accepted, one byte more gets 413', async () => {
  const exact = JSON.stringify(ask());
  await withFake({ maxBodyBytes: Buffer.byteLength(exact) }, async (fake) => {
    assert.equal((await call(fake.url, { body: exact })).status, 200);
    const over = await call(fake.url, { body: `${exact} ` });
    assert.equal(over.status, 413);
    assert.equal(at(parseObj(over.text), 'error', 'type'), 'request_too_large');
    assert.deepEqual(fake.requests.map((r) => [r.bodyBytes, r.scenario]), [[exact.length, 'text'], [exact.length + 1, null]]);
  });
});

test('HEAD, count_tokens, wrong method and unknown paths get small honest answers', async () => {
  await withFake({}, async (fake) => {
    assert.equal((await call(fake.url, { method: 'HEAD', path: '/' })).status, 200);
    assert.equal((await call(fake.url, { method: 'HEAD', path: '/api/hello' })).status, 200);
    const count = await call(fake.url, { path: '/v1/messages/count_tokens', body: ask() });
    assert.deepEqual(JSON.parse(count.text), { input_tokens: 100 });
    const wrong = await call(fake.url, { method: 'GET', path: '/v1/messages' });
    assert.equal(wrong.status, 405);
    const models = await call(fake.url, { method: 'GET', path: '/v1/models' });
    assert.equal(models.status, 404);
    assert.equal(at(parseObj(models.text), 'error', 'type'), 'not_found_error');
    assert.deepEqual(fake.requests.map((r) => `${r.method} ${r.path}`), [
      'HEAD /', 'HEAD /api/hello', 'POST /v1/messages/count_tokens', 'GET /v1/messages', 'GET /v1/models',
    ]);
  });
});

test('waitForRequest: resolves for a later request, times out, and fails on close', async () => {
  const fake = await startFakeAnthropic();
  const later = fake.waitForRequest((r) => r.path === '/v1/messages');
  await call(fake.url, { body: ask() });
  assert.equal((await later).path, '/v1/messages');
  await assert.rejects(fake.waitForRequest((r) => r.path === '/never', 30), /no matching request within 30 ms/);
  const orphan = fake.waitForRequest((r) => r.path === '/never');
  await fake.close();
  await assert.rejects(orphan, /closed while waiting/);
  await fake.close();
});
