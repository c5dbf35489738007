// The elicitation form of a permission question: what the person reads, and which answers allow.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { questionMessage, readAnswer, QUESTION_SCHEMA, timeLeftText } from '../../lib/permission/elicit.ts';
import type { JsonObject } from '../../lib/util/json.ts';

const QUESTION = {
  question_id: 'pq_1',
  tool_name: 'Bash',
  tool_use_id: 'toolu_1',
  input: '{"command":"rm -rf x"}',
  input_bytes: 22,
  input_truncated: false,
  asked_at: '2026-12-01T00:00:00.000Z',
  expires_at: '2026-12-01T00:03:00.000Z',
};

test('the message names the run, the tool, the exact input and the time left in relative terms; a cut input states its size', () => {
  const message = questionMessage('run_abc', QUESTION, 180_000);
  for (const part of ['run_abc', 'Bash', '{"command":"rm -rf x"}', 'Answer within 3 minutes', 'means deny', 'after that is refused'])
    assert.ok(message.includes(part), part);
  assert.equal(message.includes('2026-12-01'), false, "no timestamp: the reader's clock and zone are unknown");
  assert.match(
    questionMessage('run_abc', { ...QUESTION, input_truncated: true, input_bytes: 90_000 }, 1_000),
    /the whole input is 90000 bytes/,
  );
  assert.deepEqual(QUESTION_SCHEMA['required'], ['decision']);
});

test('only an accepted, well-formed form allows; everything else is a deny (null)', () => {
  assert.deepEqual(readAnswer({ action: 'accept', content: { decision: 'allow' } }), { behavior: 'allow' });
  assert.deepEqual(readAnswer({ action: 'accept', content: { decision: 'deny', reason: 'no' } }), { behavior: 'deny', reason: 'no' });
  assert.deepEqual(readAnswer({ action: 'accept', content: { decision: 'deny' } }), { behavior: 'deny' });
  const malformed: JsonObject[] = [
    { action: 'decline' },
    { action: 'cancel' },
    { action: 'accept' },
    { action: 'accept', content: [] },
    { action: 'accept', content: { decision: 'yes' } },
    { action: 'accept', content: { decision: 'allow', reason: 5 } },
    {},
  ];
  for (const result of malformed) assert.equal(readAnswer(result), null, JSON.stringify(result));
});

test('the time left is in whole units, rounded down, never below one second', () => {
  const cases: Array<[number, string]> = [
    [180_000, '3 minutes'],
    [179_999, '2 minutes 59 seconds'],
    [90_500, '1 minute 30 seconds'],
    [60_000, '1 minute'],
    [45_900, '45 seconds'],
    [1_000, '1 second'],
    [400, '1 second'],
    [-5_000, '1 second'],
  ];
  for (const [ms, text] of cases) assert.equal(timeLeftText(ms), text, `${ms} ms`);
});
