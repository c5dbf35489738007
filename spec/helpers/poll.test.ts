import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil, PollTimeoutError } from './poll.ts';

test('pollUntil resolves with the first value the probe gives, sync or async', async () => {
  let calls = 0;
  assert.equal(await pollUntil('third call', () => (++calls === 3 ? 'ok' : undefined), { timeoutMs: 5000, intervalMs: 1 }), 'ok');
  assert.equal(calls, 3);
  assert.equal(await pollUntil('async', async () => 0, { timeoutMs: 5000 }), 0, 'zero is a value, only undefined and false mean not yet');
});

test('pollUntil rejects at its deadline naming what it waited for, after a last probe', async () => {
  let calls = 0;
  await assert.rejects(
    pollUntil(
      'the impossible',
      () => {
        calls++;
        return false;
      },
      { timeoutMs: 30, intervalMs: 5 },
    ),
    /timed out after 30 ms waiting for the impossible/,
  );
  assert.ok(calls >= 2, `probed ${calls} time(s)`);
});

test('pollUntil names a lazily described state at its deadline, as a PollTimeoutError', async () => {
  let last = 0;
  const failed = pollUntil(
    () => `a count past 1e9 (last ${last})`,
    () => {
      last++;
      return false;
    },
    { timeoutMs: 20, intervalMs: 5 },
  );
  await assert.rejects(
    failed,
    (error: unknown) => error instanceof PollTimeoutError && /waiting for a count past 1e9 \(last [1-9]\d*\)/.test(error.message),
  );
});
