/** runPsLadder over scripted `ps` tables and recorded signals: what it signals, what it proves, what it reports. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ORPHANS_NAMED_MAX, runPsLadder, type PsSignals } from '../../../lib/supervisor/child/ps-ladder.ts';
import { createPsRunTracker } from '../../../lib/supervisor/child/ps-tracker.ts';
import { psFailure, type PsRow, type PsTableResult } from '../../../lib/process/ps-table.ts';

const SELF = 100;
const FLOOR = '2026-12-03T18:00:00';
const OPTIONS = { interrupt: false, interruptGraceMs: 0, termGraceMs: 0, killGraceMs: 0, pollMs: 1 };

function row(pid: number, ppid: number, pgid: number, lstart = FLOOR, stat = 'S'): PsRow {
  return { pid, ppid, pgid, stat, start: { lstart, resolution: 'second' }, command: `cmd${pid}` };
}
const BASE = [row(1, 0, 1, '2026-12-03T17:00:00'), row(SELF, 50, SELF)];

function scripted(tables: readonly (readonly PsRow[] | PsTableResult)[]): { readTable: () => Promise<PsTableResult>; reads: () => number } {
  let reads = 0;
  return {
    readTable: () => {
      const t = tables[Math.min(reads++, tables.length - 1)]!;
      return Promise.resolve(Array.isArray(t) ? { kind: 'table', rows: [...BASE, ...(t as PsRow[])] } : (t as PsTableResult));
    },
    reads: () => reads,
  };
}

function recorder(): { signals: PsSignals; sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    signals: {
      group: (pgid, signal) => {
        sent.push(`${signal}:-${pgid}`);
        return 'sent';
      },
      single: (r, latest, signal) => {
        // The identity check the real one makes, against the latest row.
        if (latest?.start?.lstart !== r.start?.lstart || latest?.stat.startsWith('Z')) return 'gone';
        sent.push(`${signal}:${r.pid}`);
        return 'sent';
      },
    },
  };
}

test('a native that exited leaving nothing: two consecutive whole tables prove it, no signal, no more reads', async () => {
  const tables = scripted([[]]);
  const { signals, sent } = recorder();
  const tracker = createPsRunTracker(SELF, () => false);
  const outcome = await runPsLadder(
    { selfPid: SELF, tracker, readTable: tables.readTable, nativeExited: () => true, interruptNative: () => {}, signals },
    OPTIONS,
  );
  assert.deepEqual(outcome, { survivors: [], steps: [], error: null });
  assert.equal(tables.reads(), 2);
  assert.deepEqual(sent, []);
});

test('an escaped job is signalled by identity, a stranger never; proven once two tables show it gone', async () => {
  const job = row(301, 1, 300);
  const stranger = row(700, 1, 700, '2026-12-03T17:00:00');
  const tracker = createPsRunTracker(SELF, () => false);
  tracker.addRoot(200);
  // The tracking saw the setsid shell 300 and its job before the shell exited.
  tracker.observe({ kind: 'table', rows: [...BASE, row(200, SELF, SELF), row(300, 200, 300), job] });
  const tables = scripted([[job, stranger], [job, stranger], [stranger]]);
  const { signals, sent } = recorder();
  const outcome = await runPsLadder(
    { selfPid: SELF, tracker, readTable: tables.readTable, nativeExited: () => true, interruptNative: () => {}, signals },
    { ...OPTIONS, termGraceMs: 50 },
  );
  assert.deepEqual(sent, [`SIGTERM:-${SELF}`, 'SIGTERM:301']);
  assert.deepEqual(outcome, { survivors: [], steps: ['SIGTERM:group', 'SIGTERM:1'], error: null });
});

test('an unattributed orphan is reported, never signalled, and the run is not confirmed', async () => {
  const orphan = row(800, 1, 800, '2026-12-03T18:00:01');
  const tables = scripted([[orphan]]);
  const { signals, sent } = recorder();
  const tracker = createPsRunTracker(SELF, () => false);
  const outcome = await runPsLadder(
    { selfPid: SELF, tracker, readTable: tables.readTable, nativeExited: () => true, interruptNative: () => {}, signals },
    OPTIONS,
  );
  assert.deepEqual(sent, []);
  assert.deepEqual(outcome.survivors, [{ pid: 800, start: '2026-12-03T18:00:01' }]);
  assert.match(outcome.error ?? '', /unattributed orphan.*800 \(cmd800\)/);
});

test('a tracked process whose pid now shows another start is not signalled', async () => {
  const tracker = createPsRunTracker(SELF, () => false);
  tracker.addRoot(200);
  tracker.observe({ kind: 'table', rows: [...BASE, row(200, SELF, SELF), row(300, 200, 300)] });
  const { signals, sent } = recorder();
  let latestStart = FLOOR;
  const readTable = (): Promise<PsTableResult> => {
    const result: PsTableResult = { kind: 'table', rows: [...BASE, row(300, 1, 300, latestStart)] };
    latestStart = '2026-12-03T18:00:09';
    return Promise.resolve(result);
  };
  const outcome = await runPsLadder(
    { selfPid: SELF, tracker, readTable, nativeExited: () => true, interruptNative: () => {}, signals },
    OPTIONS,
  );
  // The first table still showed 300 with its start: SIGTERM. Later tables show pid 300 with another start, in a
  // group of its own number: another process, never signalled, not adopted by the old group id, and (an orphan
  // started after the supervisor) reported as unattributed.
  assert.deepEqual(sent, [`SIGTERM:-${SELF}`, 'SIGTERM:300']);
  assert.deepEqual(outcome.survivors, [{ pid: 300, start: '2026-12-03T18:00:09' }]);
  assert.match(outcome.error ?? '', /unattributed orphan/);
});

for (const failure of [psFailure('ps_not_found', 'not found on PATH'), psFailure('ps_timeout', 'did not finish within 3000 ms')]) {
  test(`a ps failure (${failure.code}) leaves the run unconfirmed, names ps, and stops reading tables`, async () => {
    const tables = scripted([failure, []]);
    const { signals, sent } = recorder();
    const tracker = createPsRunTracker(SELF, () => false);
    const outcome = await runPsLadder(
      { selfPid: SELF, tracker, readTable: tables.readTable, nativeExited: () => true, interruptNative: () => {}, signals },
      OPTIONS,
    );
    assert.equal(tables.reads(), 1);
    assert.match(outcome.error ?? '', new RegExp(`^ps: .*\\(${failure.code}\\)`));
    // Only the group signal, which needs no table: the supervisor leads that group.
    assert.deepEqual(sent, [`SIGTERM:-${SELF}`]);
  });
}

test('a failure during tracking stays: later whole empty tables do not confirm', async () => {
  const tracker = createPsRunTracker(SELF, () => false);
  tracker.observe(psFailure('ps_killed', 'was ended by SIGTERM'));
  const tables = scripted([[]]);
  const outcome = await runPsLadder(
    {
      selfPid: SELF,
      tracker,
      readTable: tables.readTable,
      nativeExited: () => true,
      interruptNative: () => {},
      signals: recorder().signals,
    },
    OPTIONS,
  );
  assert.match(outcome.error ?? '', /^ps: was ended by SIGTERM \(ps_killed\)/);
});

test('the native not yet exited: SIGINT first, and no proof while its exit is not observed', async () => {
  let exited = false;
  const tables = scripted([[row(200, SELF, SELF)]]);
  const tracker = createPsRunTracker(SELF, () => false);
  tracker.addRoot(200);
  const outcome = await runPsLadder(
    {
      selfPid: SELF,
      tracker,
      readTable: tables.readTable,
      nativeExited: () => exited,
      interruptNative: () => {},
      signals: recorder().signals,
    },
    { ...OPTIONS, interrupt: true, interruptGraceMs: 5 },
  );
  assert.equal(outcome.steps[0], 'SIGINT:native');
  assert.deepEqual(outcome.survivors, [{ pid: 200, start: FLOOR }]);
  exited = true;
});

test('a table source that rejects is a ps failure: unconfirmed, named, no crash', async () => {
  const tracker = createPsRunTracker(SELF, () => false);
  const readTable = (): Promise<PsTableResult> => Promise.reject(new Error('the server went away'));
  const outcome = await runPsLadder(
    { selfPid: SELF, tracker, readTable, nativeExited: () => true, interruptNative: () => {}, signals: recorder().signals },
    OPTIONS,
  );
  assert.match(outcome.error ?? '', /^ps: no table came \(the server went away\) \(ps_spawn_failed\)/);
});

test('a group member seen only by the second table is not proven gone by the first', async () => {
  const member = row(4_000_000, 1, SELF);
  const tables = scripted([[], [member]]);
  const { signals, sent } = recorder();
  const tracker = createPsRunTracker(SELF, () => false);
  const outcome = await runPsLadder(
    { selfPid: SELF, tracker, readTable: tables.readTable, nativeExited: () => true, interruptNative: () => {}, signals },
    OPTIONS,
  );
  assert.deepEqual(outcome.survivors, [{ pid: member.pid, start: FLOOR }]);
  assert.match(outcome.error ?? '', /of the run still alive: pid 4000000/);
  assert.ok(sent.includes(`SIGKILL:${member.pid}`), JSON.stringify(sent));
  assert.ok(tables.reads() > 2);
});

test('ORPHANS_NAMED_MAX orphans are named by the error, one more is counted; all are survivors', async () => {
  for (const count of [ORPHANS_NAMED_MAX, ORPHANS_NAMED_MAX + 1]) {
    const orphans = Array.from({ length: count }, (_, i) => row(900 + i, 1, 900 + i, '2026-12-03T18:00:01'));
    const tracker = createPsRunTracker(SELF, () => false);
    const tables = scripted([orphans]);
    const outcome = await runPsLadder(
      {
        selfPid: SELF,
        tracker,
        readTable: tables.readTable,
        nativeExited: () => true,
        interruptNative: () => {},
        signals: recorder().signals,
      },
      OPTIONS,
    );
    assert.equal(outcome.survivors.length, count);
    assert.equal([...(outcome.error ?? '').matchAll(/\d+ \(cmd\d+\)/g)].length, ORPHANS_NAMED_MAX);
    assert.equal((outcome.error ?? '').endsWith(' and 1 more'), count > ORPHANS_NAMED_MAX);
  }
});
