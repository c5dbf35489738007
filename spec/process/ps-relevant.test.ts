/** The rows of one ps table a supervisor can need: its own, the ones started since, what hangs on them by link. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { indexPsTable, rowsForSupervisor } from '../../lib/process/ps-relevant.ts';
import type { PsRow } from '../../lib/process/ps-table.ts';

const SUP = 500;
const FLOOR = '2026-12-03T18:00:00';
const OLD = '2026-12-03T17:00:00';
const NEW = '2026-12-03T18:00:07';

function row(pid: number, ppid: number, pgid: number, lstart: string | null = OLD): PsRow {
  return { pid, ppid, pgid, stat: 'S', start: lstart === null ? null : { lstart, resolution: 'second' }, command: `cmd${pid}` };
}

const pids = (rows: readonly PsRow[]): number[] => rows.map((r) => r.pid);

test('a thousand strangers started before the supervisor are left out; its row, new rows and their context are kept', () => {
  const strangers = Array.from({ length: 1000 }, (_, i) => row(2000 + i, 1, 2000));
  const rows = [
    row(1, 0, 1),
    row(400, 1, 400), // the server, parent of the supervisor
    row(SUP, 400, SUP, FLOOR),
    ...strangers,
    row(600, SUP, SUP, NEW), // the native
    row(700, 1, 2000, NEW), // an orphan in a stranger's group: its leader's row is context
    row(800, 1, 800, null), // a start ps could not read: never placed before the run
  ];
  const kept = rowsForSupervisor(indexPsTable(rows), SUP);
  assert.deepEqual(pids(kept), [1, 400, SUP, 2000, 600, 700, 800]);
});

test('a descendant or group member of a kept row is kept whatever start it shows (a clock set back), not the context rows’ own', () => {
  const rows = [
    row(1, 0, 1),
    row(SUP, 400, SUP, FLOOR),
    row(600, SUP, SUP, NEW),
    row(610, 600, 610, OLD), // shows a start before the floor, but is the native's child
    row(620, 1, 610, OLD), // re-parented, in the group the child leads
    row(630, 620, 630, OLD), // and its child
    row(400, 1, 400, OLD), // the server: the supervisor's parent, context only
    row(410, 400, 400, OLD), // the server's other child: not kept through the context row
  ];
  assert.deepEqual(pids(rowsForSupervisor(indexPsTable(rows), SUP)), [1, SUP, 600, 610, 620, 630, 400]);
});

test('group 0 (kernel threads) is led by no one: a new kernel thread does not drag the others in', () => {
  const rows = [row(0, 0, 0), row(SUP, 1, SUP, FLOOR), row(2, 0, 0, OLD), row(3, 2, 0, OLD), row(900, 2, 0, NEW)];
  assert.deepEqual(pids(rowsForSupervisor(indexPsTable(rows), SUP)), [0, SUP, 2, 900]);
});

test('a table without the supervisor gives no row; one without its start gives its row alone', () => {
  const rows = [row(1, 0, 1), row(600, 1, 600, NEW)];
  assert.deepEqual(rowsForSupervisor(indexPsTable(rows), SUP), []);
  assert.deepEqual(pids(rowsForSupervisor(indexPsTable([...rows, row(SUP, 1, SUP, null)]), SUP)), [SUP]);
});
