/** Pure reading of `ps -A -o pid=,ppid=,pgid=,stat=,lstart=,command=`: procps as captured here, BSD as its source prints it, garbage refused whole. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { isSameWeakProcess, MAX_PID, parsePsTable, weakIdentityOf, type PsRow, type PsTableResult } from '../../lib/process/ps-table.ts';
import type { ProcessIdentity } from '../../lib/process/proc-stat.ts';

/** Captured on this machine: `LC_ALL=C ps -A -o pid=,ppid=,pgid=,stat=,lstart=,command=` from procps-ng 4.0.2 (lines picked, bytes kept). */
const PROCPS = readFileSync(new URL('./data/procps-4.0.2.txt', import.meta.url), 'utf8');

/**
 * BSD ps as its source prints these keywords: pid, ppid, pgid right-justified in 5 columns, stat left-justified
 * in 4, lstart left-justified in 28 (the 24 characters of %c and 4 spaces), command last and unpadded; pid 0 is
 * kernel_task, a zombie's command is its name in parentheses, and `-` stands for a start it could not read.
 */
const BSD = [
  '    0     0     0 Ss   Thu Dec  3 08:01:12 2026     kernel_task',
  '    1     0     1 Ss   Thu Dec  3 08:01:15 2026     /sbin/launchd',
  '  612     1   612 S    Sun Nov 29 23:59:59 2026     /usr/libexec/logd',
  '41234   612 41234 S+   Thu Dec  3 17:16:48 2026     node /Users/me/my  app/server.js --flag=a b',
  '41240 41234 41234 Z    Thu Dec  3 17:16:49 2026     (sleep)',
  '41241 41234 41234 R+   -                            ps -A -o pid=,ppid=,pgid=,stat=,lstart=,command=',
  '99998     1 99998 SNs  Wed Dec 31 23:00:00 2025     /bin/sleep 1000',
  '',
].join('\n');

const rowsOf = (result: PsTableResult): readonly PsRow[] => {
  assert.equal(result.kind, 'table', JSON.stringify(result));
  return result.kind === 'table' ? result.rows : [];
};

test('procps output captured here: every line is a row, command keeps its inner spaces', () => {
  const rows = rowsOf(parsePsTable(PROCPS));
  assert.equal(rows.length, PROCPS.split('\n').length - 1);
  assert.deepEqual(rows[0], {
    pid: 2,
    ppid: 0,
    pgid: 0,
    stat: 'S',
    start: { lstart: '2026-12-03T17:16:06', resolution: 'second' },
    command: '[kthreadd]',
  });
  const spaced = rows.find((r) => r.pid === 7783);
  assert.deepEqual(spaced, {
    pid: 7783,
    ppid: 1,
    pgid: 7779,
    stat: 'S',
    start: { lstart: '2026-12-03T17:20:52', resolution: 'second' },
    command: 'node  two  spaces [x] (y) 120',
  });
  assert.equal(rows.find((r) => r.pid === 7804)?.command, 'ps -A -o pid=,ppid=,pgid=,stat=,lstart=,command=');
  assert.deepEqual([...new Set(rows.map((r) => r.stat))].sort(), ['I', 'I<', 'R', 'S', 'SN', 'Ss']);
});

test('BSD-style output: padded lstart, pid 0, a zombie, a start ps could not read', () => {
  const rows = rowsOf(parsePsTable(BSD));
  assert.deepEqual(
    rows.map((r) => [r.pid, r.ppid, r.pgid, r.stat, r.start?.lstart ?? null, r.command]),
    [
      [0, 0, 0, 'Ss', '2026-12-03T08:01:12', 'kernel_task'],
      [1, 0, 1, 'Ss', '2026-12-03T08:01:15', '/sbin/launchd'],
      [612, 1, 612, 'S', '2026-11-29T23:59:59', '/usr/libexec/logd'],
      [41234, 612, 41234, 'S+', '2026-12-03T17:16:48', 'node /Users/me/my  app/server.js --flag=a b'],
      [41240, 41234, 41234, 'Z', '2026-12-03T17:16:49', '(sleep)'],
      [41241, 41234, 41234, 'R+', null, 'ps -A -o pid=,ppid=,pgid=,stat=,lstart=,command='],
      [99998, 1, 99998, 'SNs', '2025-12-31T23:00:00', '/bin/sleep 1000'],
    ],
  );
  assert.equal(weakIdentityOf(rows[5]!), null, 'no start, no identity');
});

test('identity is weak and keyed by the start second: never a ProcessIdentity', () => {
  const rows = rowsOf(parsePsTable(BSD));
  const id = weakIdentityOf(rows[3]!);
  assert.deepEqual(id, { pid: 41234, lstart: '2026-12-03T17:16:48', strength: 'weak_1s' });
  assert.ok(id !== null && isSameWeakProcess(id, rows[3]));
  // The same pid started in another second is another process; a missing row is not the process.
  const recycled = rowsOf(parsePsTable(BSD.replace('Thu Dec  3 17:16:48', 'Thu Dec  3 17:16:47')))[3];
  assert.ok(id !== null && !isSameWeakProcess(id, recycled));
  assert.ok(id !== null && !isSameWeakProcess(id, undefined));
  assert.ok(id !== null && !isSameWeakProcess(id, rows[5]));
  // @ts-expect-error a row is not an exact identity: its start is a second, not a clock tick
  const exact: ProcessIdentity = rows[3]!;
  // @ts-expect-error nor is a weak identity
  const exact2: ProcessIdentity = id!;
  assert.ok(exact !== null && exact2 !== null);
});

test('pid and stat bounds: MAX_PID and an 8-character stat are read, one more is refused', () => {
  const row = (pid: number, stat: string): string => `${pid}     1     7 ${stat} Thu Dec  3 17:16:48 2026     /bin/x\n`;
  assert.equal(rowsOf(parsePsTable(row(MAX_PID, 'SsLl<+NW')))[0]?.pid, MAX_PID);
  assert.equal(parsePsTable(row(MAX_PID + 1, 'S')).kind, 'failure');
  assert.equal(parsePsTable(row(7, 'SsLl<+NWX')).kind, 'failure');
});

test('procps prints `t` for a process stopped by its tracer (strace): a row like any other', () => {
  const traced = '31802 31730 31730 t    Thu Dec  3 17:53:02 2026 /usr/bin/env node x.mjs\n';
  assert.deepEqual(
    rowsOf(parsePsTable(traced)).map((r) => [r.pid, r.stat]),
    [[31802, 't']],
  );
});

test('the table is refused whole, with a failure naming ps and the line, never echoing it', () => {
  const good = '  7     1     7 S    Thu Dec  3 17:16:48 2026     /bin/secret --token=abc\n';
  const cases: readonly (readonly [string, string, number | null])[] = [
    ['empty', '', null],
    ['cut before its newline', good.slice(0, -1), null],
    ['cut inside lstart', `${good}  8     1     8 S    Thu Dec  3 17:1\n`, 2],
    ['no command', `${good}  8     1     8 S    Thu Dec  3 17:16:48 2026\n`, 2],
    ['a header line', `  PID  PPID  PGID STAT STARTED                      COMMAND\n${good}`, 1],
    ['a blank line', `${good}\n${good.replace('  7 ', '  9 ')}`, 2],
    ['a pid that is not a number', good.replace('  7 ', ' 7x '), 1],
    ['a pid over the limit', good.replace('  7 ', ` ${MAX_PID + 1} `), 1],
    ['a negative ppid', good.replace('     1 ', '    -1 '), 1],
    ['a state that is not a letter', good.replace(' S    ', ' 1    '), 1],
    ['a stat too long', good.replace(' S    ', ' SsLl<+NWX '), 1],
    ['Feb 30', good.replace('Thu Dec  3', 'Mon Feb 30'), 1],
    ['a weekday not the date’s', good.replace('Thu Dec  3', 'Fri Dec  3'), 1],
    ['hour 24', good.replace('17:16:48', '24:16:48'), 1],
    ['an unknown month', good.replace('Dec', 'Dez'), 1],
    ['a localized lstart (LC_ALL not C)', good.replace('Thu Dec  3 17:16:48 2026', 'jeu.  3 déc. 2026 17:16:48'), 1],
    ['a repeated pid', `${good}${good}`, 2],
  ];
  for (const [name, output, line] of cases) {
    const result = parsePsTable(output);
    assert.equal(result.kind, 'failure', name);
    if (result.kind !== 'failure') continue;
    assert.equal(result.code, 'ps_output_invalid', name);
    assert.equal(result.tool, 'ps', name);
    assert.match(result.message, /^ps: /, name);
    assert.equal(result.line, line, name);
    assert.ok(!result.message.includes('secret'), `${name}: the line is not echoed`);
  }
});
