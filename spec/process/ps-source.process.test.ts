/** The portable source's `ps` edge: the real procps table shows this spec's children; every failure of a fake ps is typed and names ps. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readPsTable, PS_MAX_OUTPUT_BYTES, PS_TIMEOUT_MS } from '../../lib/process/ps-source.ts';
import type { PsFailureCode, PsRow, PsTableResult } from '../../lib/process/ps-table.ts';
import { pollUntil } from '../helpers/poll.ts';

const FAKE_PS = fileURLToPath(new URL('../../fixtures/fake-ps/', import.meta.url));
const SYSTEM_PATH = process.env['PATH'] ?? '/usr/bin:/bin';
/** The fake's directory first, then node's (its shebang is `/usr/bin/env node`), and nothing else. */
const fakePath = (mode: string): string => `${FAKE_PS}${mode}:${dirname(process.execPath)}`;
const DEADLINE_MS = 20_000;

const rowsOf = (result: PsTableResult): readonly PsRow[] => {
  assert.equal(result.kind, 'table', JSON.stringify(result));
  return result.kind === 'table' ? result.rows : [];
};

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** Waits until the real table shows `child` as `sleep` (after its exec, not the node fork before it). */
const sleepRow = (child: ChildProcess): Promise<PsRow> =>
  pollUntil(
    `pid ${child.pid} as sleep in ps`,
    async () => rowsOf(await readPsTable({ path: SYSTEM_PATH })).find((r) => r.pid === child.pid && r.command.startsWith('sleep ')),
    { timeoutMs: DEADLINE_MS },
  );

test('the real procps table holds this process and its sleep children, a setsid one leading its own group', async () => {
  const plain = spawn('sleep', ['1000'], { stdio: 'ignore' });
  const session = spawn('setsid', ['sleep', '1000'], { stdio: 'ignore' });
  try {
    const [plainRow, sessionRow] = await Promise.all([sleepRow(plain), sleepRow(session)]);
    const rows = rowsOf(await readPsTable({ path: SYSTEM_PATH }));
    const own = rows.find((r) => r.pid === process.pid);
    assert.ok(own !== undefined && own.start !== null, 'this process is in the table');
    assert.equal(plainRow.ppid, process.pid);
    assert.equal(plainRow.pgid, own.pgid, 'a plain child stays in its parent’s group');
    assert.equal(plainRow.command, 'sleep 1000');
    assert.equal(sessionRow.ppid, process.pid);
    assert.equal(sessionRow.pgid, session.pid, 'setsid made it the leader of a new group');
    assert.notEqual(sessionRow.pgid, own.pgid);
    assert.match(sessionRow.start?.lstart ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    // One process, one start: a second scan gives the same identity.
    assert.deepEqual(rows.find((r) => r.pid === plain.pid)?.start, plainRow.start);
  } finally {
    await Promise.all([stop(plain), stop(session)]);
  }
});

/** No fake ps of this process is left: each failure settled only after its ps had exited. */
async function assertNoFakeLeft(): Promise<void> {
  const rows = rowsOf(await readPsTable({ path: SYSTEM_PATH }));
  assert.deepEqual(
    rows.filter((r) => r.ppid === process.pid && r.command.includes('fixtures/fake-ps/')),
    [],
  );
}

const FAILURES: readonly (readonly [string, string, PsFailureCode, RegExp, { timeoutMs?: number; maxOutputBytes?: number }?])[] = [
  ['absent from PATH', FAKE_PS, 'ps_not_found', /^ps: not found on PATH$/],
  ['not executable', `${FAKE_PS}noexec`, 'ps_spawn_failed', /^ps: could not be started \(EACCES\)$/],
  ['exiting non-zero', fakePath('fail'), 'ps_exit_nonzero', /^ps: exited 1: ps: illegal option -- -$/],
  ['killed by a signal', fakePath('signal'), 'ps_killed', /^ps: was ended by SIGTERM$/],
  [
    'hanging past the time bound',
    fakePath('hang'),
    'ps_timeout',
    /^ps: did not finish within 300 ms \(PS_TIMEOUT_MS\); it was killed$/,
    { timeoutMs: 300 },
  ],
  [
    'printing one byte over the output bound',
    fakePath('exact'),
    'ps_output_too_large',
    /^ps: printed more than 999 bytes \(PS_MAX_OUTPUT_BYTES\); it was killed$/,
    { maxOutputBytes: 999 },
  ],
  ['printing garbage', fakePath('garbage'), 'ps_output_invalid', /^ps: line 1 is not a process row/],
  ['cut inside a line', fakePath('cut'), 'ps_output_invalid', /^ps: output ends inside a line/],
];

for (const [name, path, code, message, bounds] of FAILURES) {
  test(`a ps ${name}: ${code}, naming ps`, async () => {
    const result = await readPsTable({ path, ...bounds });
    assert.equal(result.kind, 'failure', JSON.stringify(result));
    if (result.kind !== 'failure') return;
    assert.equal(result.code, code);
    assert.equal(result.tool, 'ps');
    assert.match(result.message, message);
    await assertNoFakeLeft();
  });
}

test('exactly at the output bound the table is read', async () => {
  const rows = rowsOf(await readPsTable({ path: fakePath('exact'), maxOutputBytes: 1000 }));
  assert.deepEqual(
    rows.map((r) => r.pid),
    [1, 7],
  );
});

test('the bounds are named and sized for a full table', () => {
  assert.equal(PS_TIMEOUT_MS, 10_000);
  assert.equal(PS_MAX_OUTPUT_BYTES, 8 * 1024 * 1024);
});
