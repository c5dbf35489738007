/** The portable tracker's rules over scripted `ps` tables: what is the run's, what is an unattributed orphan. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPsRunTracker, describeOrphan, ORPHAN_COMMAND_MAX_CHARS } from '../../../lib/supervisor/child/ps-tracker.ts';
import { MAX_TRACKED_PROCESSES } from '../../../lib/supervisor/child/tracker-state.ts';
import { psFailure, type PsRow, type PsTableResult } from '../../../lib/process/ps-table.ts';

const SELF = 100;
const FLOOR = '2026-12-03T18:00:00';

function row(pid: number, ppid: number, pgid: number, lstart: string | null = FLOOR, stat = 'S', command = `cmd${pid}`): PsRow {
  return { pid, ppid, pgid, stat, start: lstart === null ? null : { lstart, resolution: 'second' }, command };
}

const SELF_ROW = row(SELF, 50, SELF);
const INIT = row(1, 0, 1, '2026-12-03T17:00:00');

function table(...rows: PsRow[]): PsTableResult {
  return { kind: 'table', rows: [INIT, SELF_ROW, ...rows] };
}

const pids = (rows: readonly PsRow[]): number[] => rows.map((r) => r.pid);

test('the own group, the roots, ppid descendants and groups led by tracked pids are tracked', () => {
  const t = createPsRunTracker(SELF, () => false);
  t.addRoot(200);
  // 200 native (own group); 300 its setsid shell (group 300); 301 the shell's `cmd &` job; 400 a stranger.
  t.observe(table(row(200, SELF, SELF), row(300, 200, 300), row(301, 300, 300), row(400, 1, 400, '2026-12-03T17:30:00')));
  assert.deepEqual(pids(t.remaining()), [200, 300, 301]);
  assert.equal(t.groupMode(), true);
  // The shell exits: its job is re-parented to init but keeps the shell's group, which a tracked pid led.
  t.observe(table(row(200, SELF, SELF), row(301, 1, 300), row(302, 1, 300, '2026-12-03T18:00:05')));
  assert.deepEqual(pids(t.remaining()), [200, 301, 302]);
  assert.deepEqual(t.unattributed(), []);
});

test('a child of the supervisor that is not a root (its own ps) is not the run’s, though in its group', () => {
  const t = createPsRunTracker(SELF, () => false);
  t.addRoot(200);
  t.observe(table(row(200, SELF, SELF), row(250, SELF, SELF, FLOOR, 'R', 'ps -A -o pid=,ppid=,pgid=,stat=,lstart=,command=')));
  assert.deepEqual(pids(t.remaining()), [200]);
});

test('a pid seen again with another start is a stranger; zombies and identities gone are not remaining', () => {
  const t = createPsRunTracker(SELF, () => false);
  t.addRoot(200);
  t.observe(table(row(200, SELF, SELF), row(300, 200, 300)));
  // 300 exited and its pid went to a stranger started later (another lstart, another group): not the run's.
  t.observe(table(row(200, SELF, SELF, FLOOR, 'Z'), row(300, 77, 77, '2026-12-03T18:00:09')));
  assert.deepEqual(pids(t.remaining()), []);
  // A child of the stranger holding pid 300 is not adopted through the pid.
  t.observe(table(row(300, 77, 77, '2026-12-03T18:00:09'), row(310, 300, 77, '2026-12-03T18:00:10')));
  assert.deepEqual(pids(t.remaining()), []);
});

test('a child whose tracked parent exited while the table was read (unlisted) is still the run’s', () => {
  const t = createPsRunTracker(SELF, () => false);
  t.addRoot(200);
  t.observe(table(row(200, SELF, SELF), row(300, 200, 300)));
  t.observe(table(row(200, SELF, SELF), row(310, 300, 310)));
  assert.deepEqual(pids(t.remaining()), [200, 310]);
});

test('an orphan started at or after the supervisor and not tracked is unattributed; older ones and tracked ones are not', () => {
  const t = createPsRunTracker(SELF, () => false);
  t.addRoot(200);
  const before = row(500, 1, 500, '2026-12-03T17:59:59');
  const atFloor = row(501, 1, 501, FLOOR);
  const after = row(502, 1, 502, '2026-12-03T18:01:00');
  const noStart = row(503, 1, 503, null);
  const zombie = row(504, 1, 504, FLOOR, 'Z');
  const trackedOrphan = row(301, 1, SELF);
  t.observe(table(row(200, SELF, SELF), before, atFloor, after, noStart, zombie, trackedOrphan));
  assert.deepEqual(pids(t.unattributed()), [501, 502, 503]);
  assert.deepEqual(pids(t.remaining()), [200, 301]);
});

test('without leading its group the supervisor does not claim the group of its pid number', () => {
  const t = createPsRunTracker(SELF, () => false);
  const notLeader = row(SELF, 50, 50);
  t.observe({ kind: 'table', rows: [INIT, notLeader, row(600, 1, SELF, '2026-12-03T17:00:00')] });
  assert.equal(t.groupMode(), false);
  assert.deepEqual(t.remaining(), []);
});

test('a failure of ps is kept; a table without the supervisor is one; later tables are whole again but the failure stays', () => {
  const t = createPsRunTracker(SELF, () => false);
  assert.equal(t.failure(), null);
  t.observe(psFailure('ps_timeout', 'did not finish'));
  assert.equal(t.lastComplete(), false);
  assert.equal(t.failure()?.code, 'ps_timeout');
  t.observe(table());
  assert.equal(t.lastComplete(), true);
  assert.equal(t.failure()?.code, 'ps_timeout');
  const other = createPsRunTracker(SELF, () => false);
  other.observe({ kind: 'table', rows: [INIT] });
  assert.equal(other.lastComplete(), false);
  assert.match(other.failure()?.message ?? '', /^ps: .*supervisor/);
});

test('tracking stops at MAX_TRACKED_PROCESSES and says so', () => {
  const t = createPsRunTracker(SELF, () => false);
  const members = Array.from({ length: MAX_TRACKED_PROCESSES + 1 }, (_, i) => row(1000 + i, SELF + 1, SELF));
  t.observe(table(...members));
  assert.equal(t.trackedCount(), MAX_TRACKED_PROCESSES);
  assert.equal(t.overflowed(), true);
  const exact = createPsRunTracker(SELF, () => false);
  exact.observe(table(...members.slice(0, MAX_TRACKED_PROCESSES)));
  assert.equal(exact.overflowed(), false);
});

test("an orphan in a group led by a live stranger from before the run (a test runner's strace -D tracer) is not unattributed", () => {
  const t = createPsRunTracker(SELF, () => false);
  t.addRoot(200);
  // 500 leads its group since before the supervisor; 501 an orphan in it; 600 an orphan leading its own group;
  // 701 an orphan in the group of 700, which started in the supervisor's second (it could be the run's).
  const before = '2026-12-03T17:59:59';
  t.observe(
    table(
      row(200, SELF, SELF),
      row(500, 1, 500, before),
      row(501, 1, 500, '2026-12-03T18:00:03'),
      row(600, 1, 600, '2026-12-03T18:00:03'),
      row(700, 1, 700, FLOOR),
      row(701, 1, 700, '2026-12-03T18:00:03'),
    ),
  );
  assert.deepEqual(pids(t.unattributed()), [600, 700, 701]);
});

test('an orphan is described by pid and its command cut at ORPHAN_COMMAND_MAX_CHARS', () => {
  const long = 'x'.repeat(ORPHAN_COMMAND_MAX_CHARS + 1);
  assert.equal(describeOrphan(row(7, 1, 7, FLOOR, 'S', long)), `7 (${'x'.repeat(ORPHAN_COMMAND_MAX_CHARS)}…)`);
  assert.equal(
    describeOrphan(row(7, 1, 7, FLOOR, 'S', 'x'.repeat(ORPHAN_COMMAND_MAX_CHARS))),
    `7 (${'x'.repeat(ORPHAN_COMMAND_MAX_CHARS)})`,
  );
});

test('a root dropped once reaped: a later child of the supervisor with its pid (its next ps) is not the run’s', () => {
  const t = createPsRunTracker(SELF, () => false);
  t.addRoot(200);
  t.dropRoot(200);
  t.observe(table(row(200, SELF, SELF, FLOOR, 'R', 'ps -A -o pid=,ppid=,pgid=,stat=,lstart=,command=')));
  assert.deepEqual(t.remaining(), []);
});

test('a tracked process left out of a table is gone only when its pid is listed with another start or no longer exists', () => {
  const alive = new Set([300]);
  const t = createPsRunTracker(SELF, (pid) => alive.has(pid));
  t.addRoot(200);
  t.observe(table(row(200, SELF, SELF), row(300, 200, 300)));
  // 300 is unlisted (a table filtered by its server) but some process has pid 300: still the run's, under its
  // last row, and no latest row vouches for a signal.
  t.observe(table(row(200, SELF, SELF)));
  assert.deepEqual(pids(t.remaining()), [200, 300]);
  assert.equal(t.latest(300), undefined);
  // Listed again: followed on.
  t.observe(table(row(200, SELF, SELF), row(300, 1, 300)));
  assert.deepEqual(pids(t.remaining()), [200, 300]);
  // Its pid listed with another start: a stranger has it, the identity is gone.
  t.observe(table(row(200, SELF, SELF), row(300, 77, 77, '2026-12-03T18:00:09')));
  assert.deepEqual(pids(t.remaining()), [200]);
  // 200 unlisted and no process has its pid: gone.
  t.observe(table());
  assert.deepEqual(pids(t.remaining()), []);
});
