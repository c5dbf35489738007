import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_ACTIVE_RUNS, MAX_REMEMBERED_ENDED_IDS, MAX_RETAINED_RUNS, createRunRegistry } from '../../lib/runs/registry.ts';
import { isRunId } from '../../lib/runs/ids.ts';
import { createManualClock } from '../helpers/manual-clock.ts';
import { makeRegistry, toolErrorCode } from './helpers.ts';

const observe = (r: ReturnType<typeof makeRegistry>['registry']) => ({ list: r.list(), revision: r.revision, counts: r.counts() });

test('bounds are 32 retained and 4 active', () => {
  assert.equal(MAX_RETAINED_RUNS, 32);
  assert.equal(MAX_ACTIVE_RUNS, 4);
  assert.equal(MAX_REMEMBERED_ENDED_IDS, 256);
});

test('reserve records the run and builds the live slot with its id', () => {
  const { registry, clock } = makeRegistry();
  const entry = registry.reserve({ acquiredBy: 'inv-A', sync: true, live: (id) => ({ tag: `live:${id}` }) });
  assert.ok(isRunId(entry.run_id));
  assert.equal(entry.live.tag, `live:${entry.run_id}`);
  assert.equal(entry.created_at, new Date(clock.wallNow()).toISOString());
  assert.deepEqual(
    { ...entry, live: undefined },
    {
      run_id: entry.run_id,
      created_at: entry.created_at,
      settled_at: null,
      acquired_by: 'inv-A',
      sync: true,
      state: 'checking_version',
      completed: false,
      cleanup_confirmed: false,
      session_id: null,
      live: undefined,
    },
  );
  assert.equal(registry.get(entry.run_id), entry);
  assert.equal(registry.revision, 1);
});

test('the 4th active run is accepted, the 5th fails with active_limit_reached and changes nothing', () => {
  const { registry, reserve } = makeRegistry();
  for (let i = 0; i < 4; i++) reserve();
  assert.deepEqual(registry.counts(), { retained: 4, active: 4 });
  const before = observe(registry);
  let factoryCalls = 0;
  assert.throws(
    () =>
      registry.reserve({
        acquiredBy: 'x',
        sync: false,
        live: () => {
          factoryCalls++;
          return { tag: '' };
        },
      }),
    toolErrorCode('active_limit_reached'),
  );
  assert.equal(factoryCalls, 0);
  assert.deepEqual(observe(registry), before);
});

test('completed runs with unconfirmed cleanup stay active until confirmed', () => {
  const { registry, reserve } = makeRegistry();
  const ids = Array.from({ length: 4 }, () => reserve().run_id);
  for (const id of ids) registry.settle(id, { cleanupConfirmed: false });
  assert.deepEqual(registry.counts(), { retained: 4, active: 4 });
  assert.throws(() => reserve(), toolErrorCode('active_limit_reached'));
  registry.confirmCleanup(ids[2]!);
  assert.deepEqual(registry.counts(), { retained: 4, active: 3 });
  reserve();
  assert.deepEqual(registry.counts(), { retained: 5, active: 4 });
});

test('the 32nd retained run evicts nothing; the 33rd evicts the run that settled first', () => {
  const { registry, reserve, done, clock } = makeRegistry();
  const longRunning = reserve('inv-long'); // created first, settles last
  const settled = Array.from({ length: 30 }, () => done().run_id);
  const active = reserve('inv-active'); // 32nd: still active
  assert.deepEqual(registry.counts(), { retained: 32, active: 2 });
  clock.advance(1);
  registry.settle(longRunning.run_id, { cleanupConfirmed: true });
  const revision = registry.revision;

  const newest = reserve('inv-33');
  assert.equal(registry.revision, revision + 1, 'eviction and reservation are one change');
  assert.deepEqual(registry.counts(), { retained: 32, active: 2 });
  assert.throws(
    () => registry.get(settled[0]!),
    (e: Error) => toolErrorCode('run_not_found')(e) && /evicted/.test(e.message),
  );
  assert.equal(registry.get(longRunning.run_id).completed, true, 'creation order alone does not pick the victim');
  assert.equal(registry.get(active.run_id).state, 'checking_version');
  assert.deepEqual(
    registry.list().map((r) => r.run_id),
    [longRunning.run_id, ...settled.slice(1), active.run_id, newest.run_id],
  );

  reserve('inv-34'); // next victim: the next settled run
  assert.throws(() => registry.get(settled[1]!), toolErrorCode('run_not_found'));
  assert.equal(registry.counts().retained, 32);
});

test('at capacity with 4 active runs the start fails with active_limit_reached and evicts nothing', () => {
  const { registry, reserve, done } = makeRegistry();
  for (let i = 0; i < 28; i++) done();
  for (let i = 0; i < 4; i++) reserve();
  const before = observe(registry);
  assert.throws(() => reserve(), toolErrorCode('active_limit_reached'));
  assert.deepEqual(observe(registry), before);
});

test('capacity_exhausted when no retained run is evictable (reachable only with active >= retained bounds)', () => {
  const { registry, reserve } = makeRegistry({ maxRetainedRuns: 2, maxActiveRuns: 4 });
  const a = reserve();
  reserve();
  registry.settle(a.run_id, { cleanupConfirmed: false }); // completed but uncertain: not evictable
  const before = observe(registry);
  assert.throws(() => reserve(), toolErrorCode('capacity_exhausted'));
  assert.deepEqual(observe(registry), before);
  registry.confirmCleanup(a.run_id);
  reserve(); // now a is evictable
  assert.throws(() => registry.get(a.run_id), /evicted/);
});

test('a throwing live factory changes nothing, not even an eviction', () => {
  const { registry, done } = makeRegistry({ maxRetainedRuns: 1 });
  const old = done();
  const before = observe(registry);
  assert.throws(
    () =>
      registry.reserve({
        acquiredBy: 'x',
        sync: false,
        live: () => {
          throw new Error('boom');
        },
      }),
    /boom/,
  );
  assert.deepEqual(observe(registry), before);
  assert.equal(registry.get(old.run_id).run_id, old.run_id);
});

test('release: run_active, then cleanup_unconfirmed (kept), then removed; later reads say released', () => {
  const { registry, reserve } = makeRegistry();
  const entry = reserve();
  assert.throws(() => registry.release(entry.run_id), toolErrorCode('run_active'));
  registry.update(entry.run_id, { state: 'running' });
  assert.throws(() => registry.release(entry.run_id), toolErrorCode('run_active'));
  registry.settle(entry.run_id, { cleanupConfirmed: false, sessionId: 'sess-1' });
  const before = observe(registry);
  assert.throws(() => registry.release(entry.run_id), toolErrorCode('cleanup_unconfirmed'));
  assert.deepEqual(observe(registry), before);
  assert.equal(registry.get(entry.run_id).session_id, 'sess-1');
  registry.confirmCleanup(entry.run_id);
  const released = registry.release(entry.run_id);
  assert.equal(released.live.tag, `live:${entry.run_id}`);
  assert.equal(registry.counts().retained, 0);
  for (const read of [
    () => registry.get(entry.run_id),
    () => registry.release(entry.run_id),
    () => registry.update(entry.run_id, { state: 'running' }),
  ]) {
    assert.throws(read, (e: Error) => toolErrorCode('run_not_found')(e) && /released/.test(e.message) && e.message.includes(entry.run_id));
  }
});

test('unknown ids say unknown; malformed ids are not echoed', () => {
  const { registry } = makeRegistry();
  const wellFormed = 'run_' + 'A'.repeat(44);
  assert.throws(
    () => registry.get(wellFormed),
    (e: Error) => toolErrorCode('run_not_found')(e) && /unknown/.test(e.message) && e.message.includes(wellFormed),
  );
  // The earlier 22-character form names no instance: not echoed either.
  assert.throws(
    () => registry.get('run_AAAAAAAAAAAAAAAAAAAAAA'),
    (e: Error) => toolErrorCode('run_not_found')(e) && !e.message.includes('run_AAAA'),
  );
  assert.throws(
    () => registry.get('<script>'),
    (e: Error) => toolErrorCode('run_not_found')(e) && !e.message.includes('<script>'),
  );
});

test('ended ids are remembered up to 256, then forgotten oldest first', () => {
  const { registry, done } = makeRegistry();
  const ids: string[] = [];
  for (let i = 0; i < MAX_REMEMBERED_ENDED_IDS + 1; i++) ids.push(registry.release(done().run_id).run_id);
  assert.throws(() => registry.get(ids[0]!), /unknown/);
  assert.throws(() => registry.get(ids[1]!), /released/);
  assert.throws(() => registry.get(ids.at(-1)!), /released/);
});

test('acquired_by is fixed at reserve and never rebinds', () => {
  const { registry, reserve } = makeRegistry();
  const bound = reserve('inv-A');
  const unbound = reserve(null);
  registry.update(bound.run_id, { state: 'running', sessionId: 's' });
  registry.settle(bound.run_id, { cleanupConfirmed: true, sessionId: 's' });
  reserve('inv-B');
  assert.equal(registry.get(bound.run_id).acquired_by, 'inv-A');
  assert.equal(registry.get(unbound.run_id).acquired_by, null);
  assert.deepEqual(
    registry.list().map((r) => r.acquired_by),
    ['inv-A', null, 'inv-B'],
  );
});

test('list is in creation order with the reported fields', () => {
  const { registry, reserve, clock } = makeRegistry();
  const a = reserve('a');
  clock.advance(1000);
  const b = reserve('b', true);
  clock.advance(1000);
  registry.settle(a.run_id, { cleanupConfirmed: true, sessionId: 'sess-a' });
  assert.deepEqual(registry.list(), [
    {
      run_id: a.run_id,
      state: 'completed',
      completed: true,
      cleanup_confirmed: true,
      created_at: '2025-01-01T00:00:00.000Z',
      settled_at: '2025-01-01T00:00:02.000Z',
      session_id: 'sess-a',
      acquired_by: 'a',
    },
    {
      run_id: b.run_id,
      state: 'checking_version',
      completed: false,
      cleanup_confirmed: false,
      created_at: '2025-01-01T00:00:01.000Z',
      settled_at: null,
      session_id: null,
      acquired_by: 'b',
    },
  ]);
});

test('revision advances once per snapshot-visible change and never on refusals', () => {
  const { registry, reserve } = makeRegistry({ maxActiveRuns: 1 });
  assert.equal(registry.revision, 0);
  const e = reserve();
  assert.equal(registry.revision, 1);
  registry.update(e.run_id, { state: 'starting' });
  assert.equal(registry.revision, 2);
  registry.update(e.run_id, { state: 'starting' });
  registry.update(e.run_id, { sessionId: 'sess' });
  assert.equal(registry.revision, 2, 'no visible change');
  assert.throws(() => reserve(), toolErrorCode('active_limit_reached'));
  assert.throws(() => registry.release(e.run_id), toolErrorCode('run_active'));
  assert.equal(registry.revision, 2);
  registry.settle(e.run_id, { cleanupConfirmed: false });
  assert.equal(registry.revision, 3);
  registry.confirmCleanup(e.run_id);
  registry.confirmCleanup(e.run_id);
  assert.equal(registry.revision, 4);
  registry.release(e.run_id);
  assert.equal(registry.revision, 5);
});

test('misuse is refused: settling twice, updating a settled run, reserving completed', () => {
  const { registry, reserve } = makeRegistry();
  const e = reserve();
  assert.throws(() => registry.confirmCleanup(e.run_id), /has not settled/);
  assert.throws(() => registry.update(e.run_id, { state: 'completed' as 'running' }), /settle/);
  registry.settle(e.run_id, { cleanupConfirmed: true });
  assert.throws(() => registry.settle(e.run_id, { cleanupConfirmed: true }), /already settled/);
  assert.throws(() => registry.update(e.run_id, { state: 'running' }), /completed/);
  assert.throws(
    () => registry.reserve({ acquiredBy: null, sync: false, state: 'completed' as 'running', live: () => ({ tag: '' }) }),
    /completed/,
  );
});

test('a synchronous run is retained after it settles, like a detached one', () => {
  const { registry, reserve } = makeRegistry();
  const e = reserve(null, true);
  registry.settle(e.run_id, { cleanupConfirmed: true, sessionId: 's' });
  assert.equal(registry.get(e.run_id).sync, true);
  assert.deepEqual(
    registry.list().map((r) => r.run_id),
    [e.run_id],
  );
});

test('repeated ids from the random source are retried, then refused', () => {
  const clock = createManualClock();
  const registry = createRunRegistry<null>({ clock, random: (n) => Buffer.alloc(n) });
  registry.reserve({ acquiredBy: null, sync: false, live: () => null });
  assert.throws(() => registry.reserve({ acquiredBy: null, sync: false, live: () => null }), /repeated run ids/);
  assert.equal(registry.counts().retained, 1);
  assert.throws(() => createRunRegistry({ clock, random: (n) => Buffer.alloc(n), maxActiveRuns: 0 }), /positive integer/);
});
