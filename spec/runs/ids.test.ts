import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { isRunId, newRunId, RUN_ID_RANDOM_BYTES } from '../../lib/runs/ids.ts';

test('newRunId encodes 16 random bytes as run_ + 22 base64url chars', () => {
  const seen: number[] = [];
  const id = newRunId((n) => {
    seen.push(n);
    return Buffer.alloc(n, 0xff);
  });
  assert.deepEqual(seen, [RUN_ID_RANDOM_BYTES]);
  assert.equal(id, 'run_' + '_'.repeat(21) + 'w');
  assert.ok(isRunId(id));
});

test('newRunId with real randomness gives distinct well-formed ids', () => {
  const ids = new Set(Array.from({ length: 1000 }, () => newRunId(randomBytes)));
  assert.equal(ids.size, 1000);
  for (const id of ids) assert.match(id, /^run_[A-Za-z0-9_-]{22}$/);
});

test('newRunId refuses a random source that returns the wrong length', () => {
  assert.throws(() => newRunId((n) => Buffer.alloc(n - 1)), /15 bytes, expected 16/);
});

test('isRunId checks syntax only', () => {
  assert.equal(isRunId('run_AAAAAAAAAAAAAAAAAAAAAA'), true);
  assert.equal(isRunId('run_AAAAAAAAAAAAAAAAAAAAA'), false); // 21
  assert.equal(isRunId('run_AAAAAAAAAAAAAAAAAAAAAAA'), false); // 23
  assert.equal(isRunId('run_AAAAAAAAAAAAAAAAAAAA+/'), false);
  assert.equal(isRunId('job_AAAAAAAAAAAAAAAAAAAAAA'), false);
  assert.equal(isRunId('0f8fad5b-d9cb-469f-a165-70867728950e'), false);
  assert.equal(isRunId(42), false);
});
