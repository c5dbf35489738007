// The elicitation form of a permission question: what the person reads, and which answers allow.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { questionMessage, readAnswer, QUESTION_SCHEMA } from '../../lib/permission/elicit.ts';
import type { JsonObject } from '../../lib/util/json.ts';

const QUESTION = {
  question_id: 'pq_1', tool_name: 'Bash', tool_use_id: 'toolu_1', input: '{"command":"rm -rf x"}', input_bytes: 22,
  input_truncated: false, asked_at: '2026-12-01T00:00:00.000Z', expires_at: '2026-12-01T00:03:00.000Z',
};

test('the message names the run, the tool, the exact input and the deadline; a cut input states its size', () => {
  const message = questionMessage('run_abc', QUESTION);
  for (const part of ['run_abc', 'Bash', '{"command":"rm -rf x"}', '2026-12-01T00:03:00.000Z', 'means deny']) assert.ok(message.includes(part), part);
  assert.match(questionMessage('run_abc', { ...QUESTION, input_truncated: true, input_bytes: 90_000 }), /the whole input is 90000 bytes/);
  assert.deepEqual(QUESTION_SCHEMA['required'], ['decision']);
});

test('only an accepted, well-formed form allows; everything else is a deny (null)', () => {
  assert.deepEqual(readAnswer({ action: 'accept', content: { decision: 'allow' } }), { behavior: 'allow' });
  assert.deepEqual(readAnswer({ action: 'accept', content: { decision: 'deny', reason: 'no' } }), { behavior: 'deny', reason: 'no' });
  assert.deepEqual(readAnswer({ action: 'accept', content: { decision: 'deny' } }), { behavior: 'deny' });
  const malformed: JsonObject[] = [
    { action: 'decline' }, { action: 'cancel' }, { action: 'accept' }, { action: 'accept', content: [] },
    { action: 'accept', content: { decision: 'yes' } }, { action: 'accept', content: { decision: 'allow', reason: 5 } }, {},
  ];
  for (const result of malformed) assert.equal(readAnswer(result), null, JSON.stringify(result));
});
