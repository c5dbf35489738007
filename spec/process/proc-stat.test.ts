/** Pure process-identity rules: stat parsing, pid-recycling guard, descendant walk, tracking. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  collectDescendants,
  compareStart,
  groupMembers,
  isGoneIn,
  isSameProcess,
  parseProcStat,
  parseProcStatBytes,
  splitProcStat,
  type ProcStat,
} from '../../lib/process/proc-stat.ts';
import { createRunTracker, MAX_TRACKED_PROCESSES } from '../../lib/supervisor/child/tracker.ts';

const line = (pid: number, comm: string, state: string, ppid: number, pgid: number, sid: number, start: string): string =>
  `${pid} (${comm}) ${state} ${ppid} ${pgid} ${sid} 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 ${start} 1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0`;
const stat = (pid: number, ppid: number, pgid: number, sid: number, start: string, state = 'S'): ProcStat => ({
  pid,
  state,
  ppid,
  pgid,
  sid,
  start,
});

test('parseProcStat reads fields after the last ")" so comm may hold spaces and parens', () => {
  assert.deepEqual(parseProcStat(line(42, 'a b) (c', 'R', 7, 42, 40, '123456789012')), {
    pid: 42,
    state: 'R',
    ppid: 7,
    pgid: 42,
    sid: 40,
    start: '123456789012',
  });
  assert.deepEqual(parseProcStat(line(9, 'node', 'Z', 1, 9, 9, '5') + '\n'), { pid: 9, state: 'Z', ppid: 1, pgid: 9, sid: 9, start: '5' });
});

test('parseProcStat rejects what is not a stat line', () => {
  for (const bad of [
    '',
    'garbage',
    '12 (x) S 1 2',
    'x (comm) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 5',
    line(0, 'swapper', 'S', 0, 0, 0, '1'),
    line(5, 'x', 'S', 1, 1, 1, '12a'),
  ]) {
    assert.equal(parseProcStat(bad), null, bad);
  }
});

test('splitProcStat cuts at the last ")": the command name whole, fields from field 3', () => {
  const split = splitProcStat(line(42, 'a b) (c', 'R', 7, 42, 40, '99'));
  assert.equal(split?.pid, 42);
  assert.equal(split?.comm, 'a b) (c');
  assert.deepEqual(split?.fields.slice(0, 4), ['R', '7', '42', '40']);
  assert.equal(split?.fields[19], '99');
  assert.equal(splitProcStat('0 (swapper) S'), null);
  assert.equal(splitProcStat('no stat line'), null);
});

test('parseProcStatBytes reads exactly what parseProcStat reads, kernel threads included, and refuses the same lines', () => {
  const kthread = line(2, 'kthreadd', 'S', 0, 0, 0, '3').replace(' 4194560 ', ' 2129984 ');
  const good = [line(42, 'a b) (c', 'R', 7, 42, 40, '123456789012'), line(9, 'node', 'Z', 1, 9, 9, '5') + '\n', kthread];
  const bad = ['', 'garbage', '12 (x) S 1 2', line(0, 'swapper', 'S', 0, 0, 0, '1'), line(5, 'x', 'S', 1, 1, 1, '12a')];
  for (const text of [...good, ...bad]) {
    const bytes = Buffer.from(text, 'latin1');
    assert.deepEqual(parseProcStatBytes(bytes, bytes.length), parseProcStat(text), text);
  }
  assert.equal(parseProcStat(kthread)?.kthread, true);
});

test('isSameProcess: a recycled pid (other start time) is never the same process', () => {
  const id = { pid: 100, start: '5000' };
  assert.equal(isSameProcess(id, stat(100, 1, 100, 100, '5000')), true);
  assert.equal(isSameProcess(id, stat(100, 1, 100, 100, '5001')), false);
  assert.equal(isSameProcess(id, stat(101, 1, 100, 100, '5000')), false);
  assert.equal(isSameProcess(id, null), false);
});

test('compareStart orders decimal strings beyond float precision', () => {
  assert.ok(compareStart('99', '100') < 0);
  assert.ok(compareStart('18446744073709551615', '18446744073709551614') > 0);
  assert.equal(compareStart('7', '7'), 0);
});

test('collectDescendants walks ppid links from live roots only', () => {
  const table = [
    stat(10, 1, 10, 10, '1'),
    stat(11, 10, 10, 10, '2'),
    stat(12, 11, 12, 12, '3'),
    stat(13, 12, 12, 12, '4'),
    stat(20, 1, 20, 20, '5'),
  ];
  assert.deepEqual(
    collectDescendants(table, [{ pid: 10, start: '1' }]).map((s) => s.pid),
    [11, 12, 13],
  );
  // Root pid 10 recycled: its "children" are a stranger's.
  assert.deepEqual(collectDescendants(table, [{ pid: 10, start: '0' }]), []);
});

test('groupMembers excludes the caller and zombies', () => {
  const table = [stat(10, 1, 10, 10, '1'), stat(11, 10, 10, 10, '2'), stat(12, 10, 10, 10, '3', 'Z'), stat(13, 1, 13, 13, '4')];
  assert.deepEqual(
    groupMembers(table, 10, 10).map((s) => s.pid),
    [11],
  );
});

test('tracker keeps a setsid descendant after it is reparented to init, and ignores a recycled pid', () => {
  const self = 10;
  const tracker = createRunTracker({ selfPid: self, groupMode: true, roots: [{ pid: 11, start: '2' }], marker: null });
  // native 11 (in our group) spawned 12 with setsid; 12 spawned 13.
  tracker.observe([stat(10, 1, 10, 10, '1'), stat(11, 10, 10, 10, '2'), stat(12, 11, 12, 12, '3'), stat(13, 12, 12, 12, '4')]);
  assert.equal(tracker.trackedCount(), 3);
  // The native exited; 12 and 13 now hang off init, outside our group and session.
  const later = [stat(10, 1, 10, 10, '1'), stat(12, 1, 12, 12, '3'), stat(13, 12, 12, 12, '4'), stat(14, 13, 12, 12, '9')];
  tracker.observe(later);
  assert.deepEqual(
    tracker.remaining(later).map((s) => s.pid),
    [12, 13, 14],
  );
  // 12 died and its pid was recycled by an unrelated process: not ours.
  const recycled = [stat(10, 1, 10, 10, '1'), stat(12, 1, 12, 12, '777')];
  assert.deepEqual(tracker.remaining(recycled), []);
});

test('tracker without group mode never claims group members it did not see descend from the native', () => {
  const tracker = createRunTracker({ selfPid: 10, groupMode: false, roots: [{ pid: 11, start: '2' }], marker: null });
  const table = [stat(10, 1, 5, 5, '1'), stat(11, 10, 5, 5, '2'), stat(30, 1, 5, 5, '8')];
  tracker.observe(table);
  assert.deepEqual(
    tracker.remaining(table).map((s) => s.pid),
    [11],
  );
});

test('tracker at its cap: the process past MAX_TRACKED_PROCESSES marks tracking overflowed (cleanup unprovable)', () => {
  const self = 10;
  const tracker = createRunTracker({ selfPid: self, groupMode: false, roots: [{ pid: 11, start: '2' }], marker: null });
  const children = (count: number): ProcStat[] =>
    Array.from({ length: count }, (_, i) => stat(100 + i, 11, 100 + i, 100 + i, String(10 + i)));
  const atCap = [stat(11, 10, 10, 10, '2'), ...children(MAX_TRACKED_PROCESSES - 1)];
  tracker.observe(atCap);
  assert.equal(tracker.trackedCount(), MAX_TRACKED_PROCESSES);
  assert.equal(tracker.overflowed(), false);
  tracker.observe(atCap);
  assert.equal(tracker.overflowed(), false, 'seeing the same processes again is not overflow');
  tracker.observe([stat(11, 10, 10, 10, '2'), ...children(MAX_TRACKED_PROCESSES)]);
  assert.equal(tracker.trackedCount(), MAX_TRACKED_PROCESSES);
  assert.equal(tracker.overflowed(), true);
});

test('tracker adopts by marker only processes started since the run began, and by sessions and groups the run created', () => {
  const self = 10;
  const marked = new Set([21, 40]);
  const tracker = createRunTracker({
    selfPid: self,
    groupMode: true,
    roots: [{ pid: 11, start: '20' }],
    marker: { notBefore: '15', markerOf: (pid) => (marked.has(pid) ? 'yes' : 'no'), sameUser: () => true },
  });
  // 21: marked orphan (ppid 1, own session); 40: marked but older than the run; 30: a job in the session of
  // the Bash-tool shell 22 (seen once, then gone); 50: a stranger.
  tracker.observe([stat(10, 1, 10, 10, '15'), stat(11, 10, 10, 10, '20'), stat(22, 11, 22, 22, '21'), stat(30, 22, 22, 22, '22')]);
  const later = [
    stat(10, 1, 10, 10, '15'),
    stat(21, 1, 21, 21, '25'),
    stat(30, 1, 22, 22, '22'),
    stat(31, 1, 22, 22, '26'),
    stat(40, 1, 40, 40, '5'),
    stat(50, 1, 50, 50, '27'),
  ];
  tracker.observe(later);
  assert.deepEqual(
    tracker.remaining(later).map((s) => s.pid),
    [21, 30, 31],
  );
});

test('tracker: an owned session id whose number now belongs to a stranger adopts nobody', () => {
  const tracker = createRunTracker({ selfPid: 10, groupMode: true, roots: [{ pid: 11, start: '20' }], marker: null });
  tracker.observe([stat(10, 1, 10, 10, '1'), stat(11, 10, 10, 10, '20'), stat(22, 11, 22, 22, '21'), stat(30, 22, 22, 22, '22')]);
  // Every member of session 22 gone, pid 22 recycled by a stranger who leads a session of that number.
  const recycled = [stat(10, 1, 10, 10, '1'), stat(22, 1, 22, 22, '99'), stat(23, 22, 22, 22, '100')];
  tracker.observe(recycled);
  assert.deepEqual(tracker.remaining(recycled), []);
});

test('tracker: dead identities are pruned, so the cap counts live processes only', () => {
  const tracker = createRunTracker({ selfPid: 10, groupMode: false, roots: [{ pid: 11, start: '2' }], marker: null });
  const wave = (n: number): ProcStat[] => [
    stat(11, 10, 10, 10, '2'),
    ...Array.from({ length: 1000 }, (_, i) =>
      stat(1000 + n * 1000 + i, 11, 1000 + n * 1000 + i, 1000 + n * 1000 + i, String(100 + n * 1000 + i)),
    ),
  ];
  for (let n = 0; n < 8; n++) {
    tracker.observe(wave(n));
    tracker.observe(wave(n));
  }
  assert.equal(tracker.overflowed(), false, '8,000 processes over time, never more than 1,001 at once');
  assert.ok(tracker.trackedCount() <= 2001, String(tracker.trackedCount()));
});

test('tracker: a process born after the listing is not pruned by one scan that missed it', () => {
  const tracker = createRunTracker({ selfPid: 10, groupMode: false, roots: [], marker: null });
  tracker.addRoot({ pid: 11, start: '2' });
  tracker.observe([stat(10, 1, 10, 10, '1')]);
  const seen = [stat(10, 1, 10, 10, '1'), stat(11, 10, 10, 10, '2')];
  tracker.observe(seen);
  assert.deepEqual(
    tracker.remaining(seen).map((s) => s.pid),
    [11],
  );
});

test('tracker: a same-user process of the run window whose environment cannot be read is unverifiable, not adopted', () => {
  const tracker = createRunTracker({
    selfPid: 10,
    groupMode: true,
    roots: [{ pid: 11, start: '20' }],
    marker: {
      notBefore: '15',
      markerOf: (pid) => (pid === 60 || pid === 61 || pid === 63 ? 'unreadable' : 'no'),
      sameUser: (pid) => pid === 60 || pid === 63,
    },
  });
  const table = [
    stat(10, 1, 10, 10, '15'),
    stat(60, 1, 60, 60, '30'),
    stat(61, 1, 61, 61, '31'),
    stat(62, 1, 62, 62, '32'),
    stat(63, 1, 5, 5, '33'),
  ];
  tracker.observe(table);
  assert.deepEqual(tracker.remaining(table), [], 'never signalled: it may be a stranger');
  assert.deepEqual(
    tracker.unverifiable(table).map((s) => s.pid),
    [60],
    'another user (61), a readable environment (62) or a non-leader (63, a program run from a terminal) says nothing',
  );
});

test('isGoneIn: gone when /proc shows no entry, another start or a zombie; a ps identity (lstart) is never shown gone', () => {
  const live: ProcStat = { pid: 42, state: 'S', ppid: 1, pgid: 42, sid: 42, start: '777' };
  assert.equal(isGoneIn({ pid: 42, start: '777' }, live), false);
  assert.equal(isGoneIn({ pid: 42, start: '777' }, null), true);
  assert.equal(isGoneIn({ pid: 42, start: '777' }, { ...live, start: '778' }), true);
  assert.equal(isGoneIn({ pid: 42, start: '777' }, { ...live, state: 'Z' }), true);
  // Survivors a ps_scan supervisor reported carry lstart: /proc cannot judge them, so they stay survivors.
  assert.equal(isGoneIn({ pid: 42, start: '2026-12-03T18:00:00' }, null), false);
  assert.equal(isGoneIn({ pid: 42, start: '2026-12-03T18:00:00' }, live), false);
});
