// The records' hooks over an in-memory store: what is written when, and what a later server may say.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createRunRecords, type RunRecordsDeps } from '../../lib/tools/run-records.ts';
import { newRunId } from '../../lib/runs/ids.ts';
import type { RunRecord } from '../../lib/state/record.ts';
import type { StateStore } from '../../lib/state/store.ts';
import type { RunEntry } from '../../lib/runs/registry.ts';
import type { LiveRun } from '../../lib/tools/run-result.ts';
import { createManualClock } from '../helpers/manual-clock.ts';

const ME = '0f8fad5b-d9cb-469f-a165-70867728950e';
const GONE = '11111111-1111-4111-8111-111111111111';
const SESSION = '6e1b8f2c-3a4d-4e5f-9a0b-1c2d3e4f5a6b';

function memoryStore(): StateStore & { files: Map<string, RunRecord> } {
  const files = new Map<string, RunRecord>();
  return {
    files,
    status: () => ({ records: true, dir: '/x', reason: null, detail: null, ignored: 0, swept: 0 }),
    write: (record) => void files.set(record.run_id, record),
    read: (runId) => files.get(runId) ?? null,
    sweep: () => 0,
  };
}

function entry(instance: string, patch: Partial<RunEntry<LiveRun>> = {}, persist = true): RunEntry<LiveRun> {
  return {
    run_id: newRunId(randomBytes, instance),
    created_at: '2026-12-03T20:00:00.000Z',
    settled_at: null,
    acquired_by: null,
    sync: false,
    state: 'checking_version',
    completed: false,
    cleanup_confirmed: false,
    session_id: null,
    live: {
      request: { nativeOptions: persist ? {} : { no_session_persistence: true } },
      execution: null,
      classification: null,
    } as unknown as LiveRun,
    ...patch,
  };
}

function records(store: StateStore, overrides: Partial<RunRecordsDeps> = {}) {
  return createRunRecords({
    store,
    clock: createManualClock(Date.parse('2026-12-03T21:00:00.000Z')),
    instance: () => ME,
    owner: () => '1d4c.1f.2s.0123456789abcdef',
    host: 'box',
    judge: () => 'dead',
    outcomeOf: (e) => ({ ok: true, summary: `${e.run_id} succeeded`, result: { run_id: e.run_id }, text: 'answer' }),
    ...overrides,
  });
}

test('started, session, settled: each writes the record; a settled one holds the outcome and the conversation', () => {
  const store = memoryStore();
  const r = records(store);
  const e = entry(ME);
  r.started(e, true);
  assert.deepEqual([store.files.get(e.run_id)?.ended, store.files.get(e.run_id)?.task], [null, true]);
  r.session({ ...e, state: 'running' }, SESSION);
  assert.equal(store.files.get(e.run_id)?.resume_session_id, SESSION);
  r.settled({ ...e, state: 'completed', completed: true, settled_at: '2026-12-03T20:02:00.000Z', session_id: SESSION });
  const settled = store.files.get(e.run_id)!;
  assert.deepEqual(settled.ended, { at: '2026-12-03T20:02:00.000Z', by: 'settled' });
  assert.equal(settled.outcome?.text, 'answer');
  assert.equal(settled.resume_session_id, SESSION);
});

test('a conversation not saved (no_session_persistence) is never offered for resume', () => {
  const store = memoryStore();
  const r = records(store);
  const e = entry(ME, {}, false);
  r.started(e, true);
  r.session(e, SESSION);
  assert.equal(store.files.get(e.run_id)?.resume_session_id, null);
});

test('the server exit marks its unsettled runs ended by it; a settle after that does not rewrite them', () => {
  const store = memoryStore();
  const r = records(store);
  const open = entry(ME);
  const done = entry(ME, { completed: true });
  r.started(open, true);
  r.exiting([open, done]);
  assert.deepEqual(store.files.get(open.run_id)?.ended, { at: '2026-12-03T21:00:00.000Z', by: 'server_exit' });
  assert.equal(store.files.has(done.run_id), false);
  r.settled({ ...open, completed: true, state: 'completed' });
  assert.equal(store.files.get(open.run_id)?.ended?.by, 'server_exit');
});

test('past(): only ids of another instance with a record; an unended record is judged only on its own host', () => {
  const store = memoryStore();
  const mine = records(store);
  const own = entry(ME);
  mine.started(own, true);
  assert.equal(mine.past(own.run_id), null, "this server's own ids are the registry's");
  const gone = entry(GONE);
  records(store, { instance: () => GONE }).started(gone, true);
  assert.equal(mine.past(gone.run_id)?.kind, 'ended');
  assert.equal(mine.past(newRunId(randomBytes, GONE)), null, 'never issued: no record, unknown');
  assert.equal(records(store, { host: 'other-box' }).past(gone.run_id), null, 'another host: its owner cannot be judged here');
  assert.equal(records(store, { judge: () => 'alive' }).past(gone.run_id), null);
  assert.equal(mine.past('run_AAAAAAAAAAAAAAAAAAAAAA'), null);
});
