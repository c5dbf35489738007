/**
 * The server's one table source over real pipes: four supervisors asking at once cause one ps run, the server's
 * (counted by fixtures/counting-ps, first on PATH), and a supervisor whose server is gone (control EOF) still gets
 * tables by running ps itself. The supervisors are fixtures/table-asker.ts, which speaks the supervisor's side with
 * the supervisor's own table client and control parser; the gather window runs on a manual clock, so "at once"
 * is certain, not timed. A real supervisor's routing of a table line is checked at the end.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareSupervisor, getSupervisorCommand } from '../../../lib/supervisor/parent/run-supervised.ts';
import { createTableSource, TABLE_GATHER_MS, type TableSource } from '../../../lib/supervisor/parent/table-source.ts';
import type { CleanupBackend } from '../../../lib/supervisor/parent/cleanup-backend.ts';
import { runPs } from '../../../lib/process/ps-source.ts';
import { formatTableAnswer } from '../../../lib/supervisor/table-wire.ts';
import { getSupervisorEnv } from '../../../lib/supervisor/parent/supervisor-command.ts';
import { createManualClock } from '../../helpers/manual-clock.ts';
import { pollUntil } from '../../helpers/poll.ts';
import { jsonLines } from '../../helpers/typed-results.ts';

const ASKER = fileURLToPath(new URL('../../../fixtures/table-asker.ts', import.meta.url));
const COUNTING_PS = fileURLToPath(new URL('../../../fixtures/counting-ps/ps', import.meta.url));
const SCAN: CleanupBackend = { kind: 'process_scan', reason: 'forced_off', detail: 'spec' };
const WAIT = { timeoutMs: 30_000 };

const lines = (file: string): string[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];

test('four supervisors asking at once share one ps run by the server; at control EOF each runs ps itself', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'table-source-'));
  symlinkSync(COUNTING_PS, join(dir, 'ps'));
  const runs = join(dir, 'runs');
  const path = `${dir}:${dirname(process.execPath)}:/usr/bin:/bin`;
  // Supervisors inherit the server's environment: their own ps is the counting one too.
  process.env['PATH'] = path;
  const clock = createManualClock();
  const source = createTableSource({ runPs: () => runPs({ path }), clock });
  let requests = 0;
  const tables: TableSource = {
    request: (asker, id, waitMs) => {
      requests++;
      return source.request(asker, id, waitMs);
    },
    forget: (asker) => {
      source.forget(asker);
    },
  };
  const askers = [0, 1, 2, 3].map((i) => {
    const results = join(dir, `results-${i}`);
    const command = { file: process.execPath, args: ['--import', import.meta.resolve('tsx'), ASKER, results] };
    return { results, supervisor: prepareSupervisor(command, { cleanup: SCAN, tables }) };
  });
  try {
    await pollUntil(
      () => `4 requests (${requests})`,
      () => requests === 4,
      WAIT,
    );
    assert.deepEqual(lines(runs), [], 'no ps before the gather window ends');
    clock.advance(TABLE_GATHER_MS);
    await pollUntil('every first table', () => askers.every((a) => lines(a.results).length === 1), WAIT);
    assert.deepEqual(lines(runs), [String(process.pid)], 'one ps, run by the server, for four supervisors');
    for (const a of askers) {
      const [first] = jsonLines(readFileSync(a.results, 'utf8'));
      assert.deepEqual(first, { pid: a.supervisor.supervisorPid, kind: 'table', rows: first?.['rows'], self: true });
    }
    // Each asks again at once; the spec lets no ps run for them, then closes every control pipe.
    await pollUntil(
      () => `4 more requests (${requests})`,
      () => requests === 8,
      WAIT,
    );
    const outcomes = await Promise.all(askers.map((a) => a.supervisor.dispose()));
    assert.ok(outcomes.every((o) => o.supervisorExit === null || o.supervisorExit.code === 0));
    for (const a of askers) {
      const results = jsonLines(readFileSync(a.results, 'utf8'));
      assert.equal(results.length, 3, `${a.results}: the waiting read and the one after EOF`);
      for (const r of results) assert.deepEqual(r, { pid: a.supervisor.supervisorPid, kind: 'table', rows: r['rows'], self: true });
    }
    const byParent = lines(runs).slice(1).sort();
    const supervisors = askers.flatMap((a) => [String(a.supervisor.supervisorPid), String(a.supervisor.supervisorPid)]).sort();
    assert.deepEqual(byParent, supervisors, 'after EOF every table came from the supervisor’s own ps, two each');
    assert.equal(lines(runs)[0], String(process.pid), 'and the server ran no other');
    assert.equal(clock.pending(), 0, 'the forgotten requests left no gather timer');
  } finally {
    for (const a of askers) a.supervisor.kill();
    await Promise.all(askers.map((a) => a.supervisor.exited));
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a real supervisor routes a table line: one answering no request is a malformed control line, so is an off-shape one', async () => {
  for (const line of [formatTableAnswer(0, { kind: 'refused', reason: 'too_many_pending' }), '{"type":"table","id":0,"kind":"output"}\n']) {
    const command = getSupervisorCommand();
    const child = spawn(command.file, [...command.args], { stdio: ['pipe', 'ignore', 'pipe'], env: getSupervisorEnv(process.env) });
    let report = '';
    child.stderr.on('data', (chunk: Buffer) => {
      report += chunk.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.stdin.write(line);
    assert.equal(await exited, 0);
    const messages = jsonLines(report);
    assert.deepEqual(
      messages.map((m) => m['type']),
      ['spawn_error', 'cleanup'],
      report,
    );
    assert.equal(messages[0]?.['code'], 'BAD_CONTROL');
    assert.deepEqual(messages[1]?.['steps'], ['bad_control']);
    child.stdin.destroy();
  }
});
