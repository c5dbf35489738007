import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { MAX_RECORD_AGE_MS, MAX_RECORDS, MAX_TEMP_AGE_MS, planSweep, RECORDS_AFTER_SWEEP, type SeenEntry } from '../../lib/state/sweep.ts';
import { recordName } from '../../lib/state/paths.ts';
import { newRunId } from '../../lib/runs/ids.ts';

const NOW = Date.parse('2026-12-03T20:00:00.000Z');
const INSTANCE = '0f8fad5b-d9cb-469f-a165-70867728950e';
const record = (ageMs: number, extra: Partial<SeenEntry> = {}): SeenEntry => ({
  name: recordName(newRunId(randomBytes, INSTANCE)),
  regular: true,
  own: true,
  mtimeMs: NOW - ageMs,
  ...extra,
});

test('records: MAX_RECORDS are kept, one more and the oldest goes', () => {
  const entries = Array.from({ length: MAX_RECORDS }, (_, i) => record(i * 1000));
  assert.deepEqual(planSweep(entries, NOW), { remove: [], ignored: [], kept: MAX_RECORDS });
  const oldest = record(MAX_RECORDS * 1000);
  const plan = planSweep([...entries, oldest], NOW);
  assert.deepEqual(plan.remove, [oldest.name]);
  assert.equal(plan.kept, MAX_RECORDS);
});

test('records: over the bound a write sweeps down to RECORDS_AFTER_SWEEP, oldest first', () => {
  const entries = Array.from({ length: MAX_RECORDS + 1 }, (_, i) => record(i * 1000));
  const plan = planSweep(entries, NOW, RECORDS_AFTER_SWEEP);
  assert.equal(plan.kept, RECORDS_AFTER_SWEEP);
  assert.equal(plan.remove.length, MAX_RECORDS + 1 - RECORDS_AFTER_SWEEP);
  assert.equal(plan.remove[0], entries.at(-1)!.name);
  assert.ok(!plan.remove.includes(entries[RECORDS_AFTER_SWEEP - 1]!.name));
});

test('age: a record of exactly MAX_RECORD_AGE_MS stays, one millisecond older goes; temps after MAX_TEMP_AGE_MS', () => {
  const atBound = record(MAX_RECORD_AGE_MS);
  const past = record(MAX_RECORD_AGE_MS + 1);
  const tempAt: SeenEntry = { name: '.tmp-0123456789abcdef', regular: true, own: true, mtimeMs: NOW - MAX_TEMP_AGE_MS };
  const tempPast: SeenEntry = { ...tempAt, name: '.tmp-fedcba9876543210', mtimeMs: NOW - MAX_TEMP_AGE_MS - 1 };
  const plan = planSweep([atBound, past, tempAt, tempPast], NOW);
  assert.deepEqual(plan.remove, [past.name, tempPast.name]);
  assert.equal(plan.kept, 1);
});

test('never removed, only reported: foreign names, other owners, anything but a regular file', () => {
  const old = MAX_RECORD_AGE_MS * 2;
  const foreign: SeenEntry = { name: '.DS_Store', regular: true, own: true, mtimeMs: NOW - old };
  const notMine = record(old, { own: false });
  const link = record(old, { regular: false });
  const plan = planSweep([foreign, notMine, link], NOW);
  assert.deepEqual(plan.remove, []);
  assert.deepEqual(plan.ignored, [
    { name: '.DS_Store', reason: 'foreign_name' },
    { name: notMine.name, reason: 'foreign_owner' },
    { name: link.name, reason: 'not_a_file' },
  ]);
});
