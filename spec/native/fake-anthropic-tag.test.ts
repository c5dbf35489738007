// The prompt-tag chooser: how one shared adapter process still gets a scenario per run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newestTag, promptTag, scenarioByPromptTag, startFakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import type { RecordedRequest } from '../../fixtures/fake-anthropic/server.ts';
import { call } from './http-client.ts';

const user = (...texts: string[]): Record<string, unknown> => ({ role: 'user', content: texts.map((text) => ({ type: 'text', text })) });
const request = (messages: unknown[]): RecordedRequest => ({
  seq: 1, method: 'POST', path: '/v1/messages', query: '', headers: {}, body: { messages }, bodyBytes: 0, stream: true, scenario: null, receivedAtEpochMs: 0,
});

test('promptTag spells the tag the chooser reads', () => {
  assert.equal(promptTag('http_401'), '[fake:http_401]');
  assert.equal(newestTag({ messages: [user(`go ${promptTag('http_401')}`)] }), 'http_401');
});

test('the newest user message with a tag wins; assistant text and tool_result-only messages are skipped', () => {
  const messages = [
    user(`first ${promptTag('old')}`),
    { role: 'assistant', content: [{ type: 'text', text: promptTag('assistant') }] },
    user('<system-reminder>x</system-reminder>', `second ${promptTag('a')} then ${promptTag('b')}`),
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: promptTag('tool') }] },
  ];
  assert.equal(newestTag({ messages }), 'b');
  assert.equal(newestTag({ messages: [{ role: 'user', content: `plain string ${promptTag('s')}` }] }), 's');
  assert.equal(newestTag({ messages: [user('no tag here'), user('[fake:]'), user('[fake:has space]')] }), undefined);
  assert.equal(newestTag(null), undefined);
});

test('a tag of exactly 64 name characters is read; 65 is not a tag', () => {
  assert.equal(newestTag({ messages: [user(promptTag('n'.repeat(64)))] }), 'n'.repeat(64));
  assert.equal(newestTag({ messages: [user(promptTag('n'.repeat(65)))] }), undefined);
});

test('named scenarios win over presets; presets resolve; no tag gives the fallback; an unknown name throws', () => {
  const choose = scenarioByPromptTag({ http_401: { kind: 'text', text: 'shadowed' }, mine: { kind: 'hang' } }, { kind: 'text', text: 'fallback' });
  assert.deepEqual(choose(request([user(promptTag('mine'))])), { kind: 'hang' });
  assert.deepEqual(choose(request([user(promptTag('http_401'))])), { kind: 'text', text: 'shadowed' });
  assert.deepEqual(choose(request([user(promptTag('http_529'))])), { kind: 'http_error', status: 529 });
  assert.deepEqual(choose(request([user('untagged')])), { kind: 'text', text: 'fallback' });
  assert.throws(() => choose(request([user(promptTag('nope'))])), /unknown prompt tag \[fake:nope\]/);
});

test('served: the tag picks the answer, and an unknown tag is answered 400', async () => {
  const fake = await startFakeAnthropic({ scenario: scenarioByPromptTag({}) });
  try {
    const ask = (text: string): Record<string, unknown> => ({ model: 'm', max_tokens: 5, stream: false, messages: [user(text)] });
    const failed = await call(fake.url, { body: ask(`x ${promptTag('http_429')}`) });
    assert.equal(failed.status, 429);
    const plain = await call(fake.url, { body: ask('x') });
    assert.equal(plain.status, 200);
    const unknown = await call(fake.url, { body: ask(`x ${promptTag('nope')}`) });
    assert.equal(unknown.status, 400);
    assert.match(unknown.text, /unknown prompt tag/);
    assert.deepEqual(fake.requests.map((r) => r.scenario), ['http_error', 'text', null]);
  } finally {
    await fake.close();
  }
});
