/** Tracking while the run lives under ps_scan: one table at a time, the next PS_TRACK_GAP_MS after the previous came, stopping when idle and empty. */
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { PS_IDLE_EMPTY_TABLES, PS_TRACK_GAP_MS, PS_TRACK_INTERVAL_MS, startPsTracking } from '../../../lib/supervisor/child/ps-tracking.ts';
import { createPsRunTracker } from '../../../lib/supervisor/child/ps-tracker.ts';
import type { PsRow, PsTableResult } from '../../../lib/process/ps-table.ts';

const SELF = 100;
const row = (pid: number, ppid: number, pgid: number): PsRow => ({
  pid,
  ppid,
  pgid,
  stat: 'S',
  start: { lstart: '2026-12-03T18:00:00', resolution: 'second' },
  command: `cmd${pid}`,
});
const TABLE: PsTableResult = { kind: 'table', rows: [row(1, 0, 1), row(SELF, 50, SELF), row(200, SELF, SELF)] };
const EMPTY: PsTableResult = { kind: 'table', rows: [row(1, 0, 1), row(SELF, 50, SELF)] };

/** Lets the promise callbacks of a resolved read run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('a read PS_TRACK_GAP_MS after the previous table came, and never two at once', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const tracker = createPsRunTracker(SELF, () => false);
  tracker.addRoot(200);
  let reads = 0;
  let answer: (result: PsTableResult) => void = () => {};
  const readTable = (): Promise<PsTableResult> => {
    reads++;
    return new Promise((resolve) => {
      answer = resolve;
    });
  };
  const stop = startPsTracking(tracker, readTable, { cleaning: () => false, idle: () => false, reading: () => {} });
  t.mock.timers.tick(PS_TRACK_GAP_MS - 1);
  assert.equal(reads, 0);
  t.mock.timers.tick(1);
  assert.equal(reads, 1);
  // The first read has not answered: however long it takes, no second read starts.
  t.mock.timers.tick(10 * PS_TRACK_GAP_MS);
  assert.equal(reads, 1);
  answer(TABLE);
  await settle();
  assert.deepEqual(
    tracker.remaining().map((r) => r.pid),
    [200],
  );
  t.mock.timers.tick(PS_TRACK_GAP_MS - 1);
  assert.equal(reads, 1, 'the gap counts from the answer');
  t.mock.timers.tick(1);
  assert.equal(reads, 2);
  stop();
  mock.timers.reset();
});

test('idle (no probe, no native) and PS_IDLE_EMPTY_TABLES empty tables in a row: tracking stops; a table read while cleaning is dropped', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const tracker = createPsRunTracker(SELF, () => false);
  let reads = 0;
  let cleaning = false;
  const pending: (Promise<void> | null)[] = [];
  startPsTracking(
    tracker,
    () => {
      reads++;
      return Promise.resolve(EMPTY);
    },
    { cleaning: () => cleaning, idle: () => true, reading: (p) => pending.push(p) },
  );
  for (let i = 0; i < PS_IDLE_EMPTY_TABLES + 2; i++) {
    t.mock.timers.tick(PS_TRACK_GAP_MS);
    await settle();
  }
  assert.equal(reads, PS_IDLE_EMPTY_TABLES);
  assert.ok(pending.at(-1) === null && pending.some((p) => p !== null), 'each read was announced, and its end');
  const other = createPsRunTracker(SELF, () => false);
  const stop = startPsTracking(other, () => Promise.resolve(EMPTY), { cleaning: () => cleaning, idle: () => false, reading: () => {} });
  cleaning = true;
  t.mock.timers.tick(PS_TRACK_GAP_MS);
  await settle();
  assert.equal(other.lastComplete(), false, 'nothing read once cleanup began');
  stop();
  mock.timers.reset();
});

test('now: one table at once, waiting for no shared ps and no read under way, folded in before it resolves', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const tracker = createPsRunTracker(SELF, () => false);
  tracker.addRoot(200);
  const waits: number[] = [];
  const answers: ((result: PsTableResult) => void)[] = [];
  const readTable = (waitMs: number): Promise<PsTableResult> => {
    waits.push(waitMs);
    return new Promise((resolve) => answers.push(resolve));
  };
  const tracking = startPsTracking(tracker, readTable, { cleaning: () => false, idle: () => false, reading: () => {} });
  t.mock.timers.tick(PS_TRACK_GAP_MS);
  assert.deepEqual(waits, [PS_TRACK_INTERVAL_MS], 'the timed read offers to share');
  let done = false;
  const now = tracking.now().then(() => {
    done = true;
  });
  assert.deepEqual(waits, [PS_TRACK_INTERVAL_MS, 0], 'asked at once, beside the read under way');
  answers[0]?.(EMPTY);
  await settle();
  assert.equal(done, false, 'the older table does not answer it');
  answers[1]?.(TABLE);
  await now;
  assert.ok(
    tracker.remaining().some((id) => id.pid === 200),
    'the child listed by that table is tracked when now resolves',
  );
  t.mock.timers.tick(PS_TRACK_GAP_MS);
  assert.equal(waits.length, 3, 'one next read, scheduled by the newest read alone');
  t.mock.timers.tick(PS_TRACK_GAP_MS * 5);
  assert.equal(waits.length, 3, 'never two timers');
  tracking();
});
