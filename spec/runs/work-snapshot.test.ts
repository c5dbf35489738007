import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WORK_URI, buildWorkSnapshot, createWorkSnapshotReader } from '../../lib/runs/work-snapshot.ts';
import type { WorkSnapshotOutcome } from '../../lib/runs/work-snapshot.ts';
import { makeRegistry } from './helpers.ts';
import { objs } from '../helpers/typed-results.ts';

const INSTANCE = '6f1c2a57-3e0b-4c4e-9a49-0d4c8f3c9b21';
const INV_A = '0f8fad5b-d9cb-469f-a165-70867728950e';
const INV_B = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

function body(outcome: WorkSnapshotOutcome) {
  assert.ok(outcome.ok, outcome.ok ? '' : outcome.message);
  return outcome.body;
}

test('an empty registry is a valid snapshot at revision 0', () => {
  const { registry } = makeRegistry();
  assert.deepEqual(body(buildWorkSnapshot(registry, INSTANCE)), {
    format_version: 1,
    uri: WORK_URI,
    instance_id: INSTANCE,
    revision: 0,
    owners: [],
  });
  assert.equal(WORK_URI, 'computer-mcp://runtime/work/v1');
});

test('every phase is an active owner; unconfirmed cleanup is uncertain even when completed', () => {
  const { registry, reserve } = makeRegistry({ maxActiveRuns: 8 });
  const waiting = registry.reserve({ acquiredBy: INV_A, sync: false, state: 'waiting_for_session', live: () => ({ tag: '' }) });
  const checking = reserve(INV_A);
  const streaming = reserve(INV_B, true);
  registry.update(streaming.run_id, { state: 'running' });
  const failed = reserve(INV_B);
  registry.settle(failed.run_id, { cleanupConfirmed: false });
  const doneRun = reserve(INV_A);
  registry.settle(doneRun.run_id, { cleanupConfirmed: true });
  const snapshot = body(buildWorkSnapshot(registry, INSTANCE));
  assert.equal(snapshot['revision'], registry.revision);
  assert.deepEqual(snapshot['owners'], [
    {
      kind: 'claude.run',
      run_id: waiting.run_id,
      acquired_by: INV_A,
      state: 'waiting_for_session',
      completed: false,
      cleanup_confirmed: false,
      ownership: 'active',
    },
    {
      kind: 'claude.run',
      run_id: checking.run_id,
      acquired_by: INV_A,
      state: 'checking_version',
      completed: false,
      cleanup_confirmed: false,
      ownership: 'active',
    },
    {
      kind: 'claude.run',
      run_id: streaming.run_id,
      acquired_by: INV_B,
      state: 'running',
      completed: false,
      cleanup_confirmed: false,
      ownership: 'active',
    },
    {
      kind: 'claude.run',
      run_id: failed.run_id,
      acquired_by: INV_B,
      state: 'completed',
      completed: true,
      cleanup_confirmed: false,
      ownership: 'uncertain',
    },
    {
      kind: 'claude.run',
      run_id: doneRun.run_id,
      acquired_by: INV_A,
      state: 'completed',
      completed: true,
      cleanup_confirmed: true,
      ownership: 'active',
    },
  ]);
});

test('release and eviction end ownership', () => {
  const { registry, done } = makeRegistry({ maxRetainedRuns: 2 });
  const a = done(INV_A);
  const b = done(INV_A);
  registry.release(a.run_id);
  done(INV_B);
  done(INV_B); // evicts b
  const owners = objs(body(buildWorkSnapshot(registry, INSTANCE))['owners'], 'owners');
  assert.equal(owners.length, 2);
  assert.ok(!owners.some((o) => o['run_id'] === a.run_id || o['run_id'] === b.run_id));
});

test('an unbound retained run makes the snapshot an error, even after it completes', () => {
  const { registry, reserve } = makeRegistry();
  reserve(INV_A);
  const unbound = reserve(null);
  const outcome = buildWorkSnapshot(registry, INSTANCE);
  assert.equal(outcome.ok, false);
  assert.ok(!outcome.ok);
  assert.equal(outcome.code, 'work_snapshot_unbound');
  assert.ok(outcome.message.includes(unbound.run_id));
  registry.settle(unbound.run_id, { cleanupConfirmed: true });
  assert.equal(buildWorkSnapshot(registry, INSTANCE).ok, false);
  registry.release(unbound.run_id);
  assert.equal(buildWorkSnapshot(registry, INSTANCE).ok, true);
});

test('revisions never go backwards and errors keep the last valid revision', () => {
  const { registry, reserve } = makeRegistry();
  const reader = createWorkSnapshotReader(registry, INSTANCE);
  const seen: number[] = [];
  const readOk = () => {
    const o = reader.read();
    assert.ok(o.ok);
    seen.push(o.revision);
    return o;
  };

  readOk(); // 0
  const bound = reserve(INV_A);
  readOk(); // 1
  assert.equal(reader.lastValidRevision(), 1);
  const unbound = reserve(null); // 2 (not servable)
  registry.update(unbound.run_id, { state: 'running' }); // 3
  for (let i = 0; i < 3; i++) {
    const error = reader.read();
    assert.ok(!error.ok);
    assert.equal(error.last_valid_revision, 1);
    assert.match(error.message, /last valid revision stays 1/);
  }
  assert.equal(reader.lastValidRevision(), 1, 'errors do not advance or lose it');
  assert.equal(registry.revision, 3, 'reads never consume a revision');
  registry.settle(unbound.run_id, { cleanupConfirmed: true }); // 4
  registry.release(unbound.run_id); // 5
  assert.equal(readOk().revision, 5);
  assert.equal(readOk().revision, 5, 'no change, same revision');
  registry.update(bound.run_id, { state: 'running' }); // 6
  readOk();
  assert.deepEqual(seen, [0, 1, 5, 5, 6]);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! >= seen[i - 1]!);
  // Same revision, same content.
  assert.deepEqual(body(reader.read()), body(reader.read()));
});

test('before any valid snapshot, an error says none was served', () => {
  const { registry, reserve } = makeRegistry();
  reserve(null);
  const reader = createWorkSnapshotReader(registry, INSTANCE);
  const error = reader.read();
  assert.ok(!error.ok);
  assert.equal(error.last_valid_revision, null);
  assert.match(error.message, /no valid snapshot/);
  assert.equal(reader.lastValidRevision(), null);
});
