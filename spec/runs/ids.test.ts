import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { instanceTag, isRunId, newRunId, RUN_ID_PATTERN, RUN_ID_RANDOM_BYTES, runIdInstance, uuidFromRandom } from '../../lib/runs/ids.ts';

const INSTANCE = '0f8fad5b-d9cb-469f-a165-70867728950e';

test('newRunId is run_ + the instance (22 base64url chars) + 16 random bytes (22 more)', () => {
  const seen: number[] = [];
  const id = newRunId((n) => {
    seen.push(n);
    return Buffer.alloc(n, 0xff);
  }, INSTANCE);
  assert.deepEqual(seen, [RUN_ID_RANDOM_BYTES]);
  assert.equal(id, 'run_' + Buffer.from(INSTANCE.replaceAll('-', ''), 'hex').toString('base64url') + '_'.repeat(21) + 'w');
  assert.equal(id.length, 4 + 44);
  assert.ok(isRunId(id));
  assert.equal(runIdInstance(id), INSTANCE);
});

test('newRunId with real randomness gives distinct well-formed ids that name their instance', () => {
  const instance = randomUUID();
  const ids = new Set(Array.from({ length: 1000 }, () => newRunId(randomBytes, instance)));
  assert.equal(ids.size, 1000);
  for (const id of ids) {
    assert.match(id, RUN_ID_PATTERN);
    assert.equal(runIdInstance(id), instance);
  }
});

test('newRunId refuses a random source of the wrong length and an instance that is no UUID', () => {
  assert.throws(() => newRunId((n) => Buffer.alloc(n - 1), INSTANCE), /15 bytes, expected 16/);
  assert.throws(() => newRunId(randomBytes, 'not-a-uuid'), /must be a UUID/);
  assert.throws(() => instanceTag(''), /must be a UUID/);
});

test('isRunId and runIdInstance: syntax, length and the canonical spelling only', () => {
  const id = newRunId(randomBytes, INSTANCE);
  assert.equal(isRunId(id.slice(0, -1)), false); // 43
  assert.equal(isRunId(id + 'A'), false); // 45
  assert.equal(isRunId('run_AAAAAAAAAAAAAAAAAAAAAA'), false); // the earlier 22-character form names no instance
  assert.equal(isRunId(id.replace(/^run_/, 'job_')), false);
  assert.equal(isRunId(id.slice(0, 10) + '+' + id.slice(11)), false);
  // The 22nd character of a 16-byte part carries 2 bits: any other letter is a second spelling of the same bytes.
  const tag = instanceTag(INSTANCE);
  const twin = tag.slice(0, 21) + String.fromCharCode(tag.charCodeAt(21) + 1);
  assert.equal(Buffer.from(twin, 'base64url').equals(Buffer.from(tag, 'base64url')), true);
  assert.equal(runIdInstance(`run_${twin}${id.slice(26)}`), null);
  assert.equal(isRunId(42), false);
  assert.equal(isRunId(INSTANCE), false);
});

test('uuidFromRandom makes a version-4 UUID of 16 random bytes', () => {
  const uuid = uuidFromRandom((n) => Buffer.alloc(n, 0xff));
  assert.equal(uuid, 'ffffffff-ffff-4fff-bfff-ffffffffffff');
  assert.throws(() => uuidFromRandom((n) => Buffer.alloc(n - 2)), /14 bytes/);
});
