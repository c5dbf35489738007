import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_WAITERS_PER_SESSION, createSessionLock, sessionLockKeys } from '../../lib/runs/session-lock.ts';
import type { ReleaseLock } from '../../lib/runs/session-lock.ts';
import { isToolError } from '../../lib/tool-errors.ts';

const never = new AbortController().signal;
/** Lets every settled promise's reactions run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

test('one holder per key, waiters granted in FIFO order', async () => {
  const lock = createSessionLock();
  const order: string[] = [];
  const first = await lock.acquire('session:a', never);
  const waiters = ['w1', 'w2', 'w3'].map((name) =>
    lock.acquire('session:a', never).then((release) => {
      order.push(name);
      return release;
    }),
  );
  await flush();
  assert.deepEqual(order, []);
  assert.equal(lock.waiting('session:a'), 3);
  first();
  await flush();
  assert.deepEqual(order, ['w1']);
  (await waiters[0]!)();
  await flush();
  assert.deepEqual(order, ['w1', 'w2']);
  (await waiters[1]!)();
  (await waiters[2]!)();
  assert.deepEqual(order, ['w1', 'w2', 'w3']);
  assert.equal(lock.size(), 0, 'no entry survives the last release');
});

test('different keys do not wait for each other', async () => {
  const lock = createSessionLock();
  const a = await lock.acquire('session:a', never);
  const b = await lock.acquire('session:b', never);
  assert.equal(lock.isHeld('session:a') && lock.isHeld('session:b'), true);
  a();
  b();
  assert.equal(lock.size(), 0);
});

test('release is idempotent: a double release does not skip a waiter', async () => {
  const lock = createSessionLock();
  const first = await lock.acquire('k', never);
  let second: ReleaseLock | undefined;
  let thirdGranted = false;
  void lock.acquire('k', never).then((r) => {
    second = r;
  });
  void lock.acquire('k', never).then(() => {
    thirdGranted = true;
  });
  first();
  first();
  await flush();
  assert.ok(second);
  assert.equal(thirdGranted, false);
  assert.equal(lock.waiting('k'), 1);
  second();
  await flush();
  assert.equal(thirdGranted, true);
});

test('abort while waiting removes the waiter and rejects with an AbortError', async () => {
  const lock = createSessionLock();
  const holder = await lock.acquire('k', never);
  const controller = new AbortController();
  const aborted = lock.acquire('k', controller.signal);
  let nextGranted = false;
  const next = lock.acquire('k', never).then((r) => {
    nextGranted = true;
    return r;
  });
  assert.equal(lock.waiting('k'), 2);
  controller.abort(new Error('client cancelled'));
  await assert.rejects(
    aborted,
    (e: Error & { code?: string; cause?: unknown }) =>
      e.name === 'AbortError' && e.code === 'ABORT_ERR' && e.cause instanceof Error && e.cause.message === 'client cancelled',
  );
  assert.equal(lock.waiting('k'), 1);
  holder();
  (await next)();
  assert.equal(nextGranted, true);
  assert.equal(lock.size(), 0);
});

test('an already aborted signal rejects even when the key is free', async () => {
  const lock = createSessionLock();
  await assert.rejects(lock.acquire('k', AbortSignal.abort()), { name: 'AbortError' });
  assert.equal(lock.size(), 0);
});

test('abort after the grant has no effect', async () => {
  const lock = createSessionLock();
  const holder = await lock.acquire('k', never);
  const controller = new AbortController();
  const granted = lock.acquire('k', controller.signal);
  holder();
  const release = await granted;
  controller.abort();
  assert.equal(lock.isHeld('k'), true);
  release();
  assert.equal(lock.size(), 0);
});

test(`waiters are bounded at ${MAX_WAITERS_PER_SESSION} per key; one more is session_busy`, async () => {
  assert.equal(MAX_WAITERS_PER_SESSION, 32);
  const lock = createSessionLock();
  const holder = await lock.acquire('k', never);
  // One signal per waiter, as in production (one AbortController per run).
  const queued = Array.from({ length: MAX_WAITERS_PER_SESSION }, () => lock.acquire('k', new AbortController().signal));
  assert.equal(lock.waiting('k'), MAX_WAITERS_PER_SESSION);
  let refusal: unknown;
  lock.acquire('k', never).then(
    () => {
      refusal = 'granted';
    },
    (error: unknown) => {
      refusal = error;
    },
  );
  await flush();
  assert.ok(isToolError(refusal), `refused with a ToolError: ${String(refusal)}`);
  assert.equal(refusal.code, 'session_busy');
  assert.equal(lock.waiting('k'), MAX_WAITERS_PER_SESSION);
  const other = await lock.acquire('other', never); // other keys unaffected
  other();
  holder();
  for (const waiter of queued) (await waiter)();
  assert.equal(lock.size(), 0);
});

test('acquireAll takes keys in sorted order and releases partial holds on failure', async () => {
  const lock = createSessionLock();
  const both = await lock.acquireAll(['session:x', 'cwd:/p', 'session:x'], never);
  assert.equal(lock.isHeld('cwd:/p') && lock.isHeld('session:x'), true);
  const controller = new AbortController();
  const blocked = lock.acquireAll(['session:x', 'cwd:/q'], controller.signal);
  await flush();
  assert.equal(lock.isHeld('cwd:/q'), true, 'cwd:/q sorts first and is held while waiting');
  controller.abort();
  await assert.rejects(blocked, { name: 'AbortError' });
  assert.equal(lock.isHeld('cwd:/q'), false);
  both();
  both();
  assert.equal(lock.size(), 0);
});

test('lock keys per session intent', () => {
  const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
  assert.deepEqual(sessionLockKeys({ kind: 'fresh' }, '/p'), []);
  assert.deepEqual(sessionLockKeys({ kind: 'new', sessionId: id }, '/p'), [`session:${id}`]);
  assert.deepEqual(sessionLockKeys({ kind: 'resume', sessionId: id, fork: false }, '/p'), [`session:${id}`]);
  assert.deepEqual(sessionLockKeys({ kind: 'resume', sessionId: id, fork: true }, '/other'), [`session:${id}`]);
  assert.deepEqual(sessionLockKeys({ kind: 'continue', fork: false }, '/p'), ['cwd:/p']);
  assert.deepEqual(sessionLockKeys({ kind: 'continue', fork: false }, '/p', id), ['cwd:/p', `session:${id}`]);
});
