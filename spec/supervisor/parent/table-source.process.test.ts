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
import { createTableSource, TABLE_GATHER_MS, type TableAsker, type TableSource } from '../../../lib/supervisor/parent/table-source.ts';
import type { CleanupBackend } from '../../../lib/supervisor/parent/cleanup-backend.ts';
import { runPs } from '../../../lib/process/ps-source.ts';
import { formatTableAnswer } from '../../../lib/supervisor/table-wire.ts';
import { getSupervisorEnv } from '../../../lib/supervisor/parent/supervisor-command.ts';
import { createManualClock } from '../../helpers/manual-clock.ts';
import { pollUntil } from '../../helpers/poll.ts';
import { jsonLines, num, parseObj } from '../../helpers/typed-results.ts';
import { identify, killIfRunning, waitForGone, waitForReady } from '../../helpers/proc.ts';
import { startFake } from '../harness.ts';
import { TABLE_REQUEST_WAIT_MAX_MS, type ProcessIdentity } from '../../../lib/supervisor/protocol.ts';
import { platformArg } from '../../../lib/supervisor/protocol.ts';

const ASKER = fileURLToPath(new URL('../../../fixtures/table-asker.ts', import.meta.url));
const COUNTING_PS = fileURLToPath(new URL('../../../fixtures/counting-ps/ps', import.meta.url));
const PARENT = fileURLToPath(new URL('../../../fixtures/supervisor-parent.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SCAN: CleanupBackend = { kind: 'process_scan', reason: 'forced_off', detail: 'spec' };
const PS_SCAN: CleanupBackend = { kind: 'ps_scan', reason: 'forced_off', detail: 'spec' };
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
    answerFor: (answer, pid) => source.answerFor(answer, pid),
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
    const child = spawn(command.file, [...command.args, platformArg('linux')], {
      stdio: ['pipe', 'ignore', 'pipe'],
      env: getSupervisorEnv(process.env),
    });
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

/** A source on a manual clock that counts the supervisors that asked and the answers it gave. */
function countedSource(path: string): {
  tables: TableSource;
  clock: ReturnType<typeof createManualClock>;
  askers: Set<TableAsker>;
  answered: Set<TableAsker>;
} {
  const clock = createManualClock();
  const source = createTableSource({ runPs: () => runPs({ path }), clock });
  const askers = new Set<TableAsker>();
  const answered = new Set<TableAsker>();
  const counting = new Map<TableAsker, TableAsker>();
  const wrap = (asker: TableAsker): TableAsker => {
    let wrapped = counting.get(asker);
    if (wrapped === undefined) {
      wrapped = {
        answer: (id, answer, flushed) => {
          answered.add(asker);
          asker.answer(id, answer, flushed);
        },
      };
      counting.set(asker, wrapped);
    }
    return wrapped;
  };
  const tables: TableSource = {
    request: (asker, id, waitMs) => {
      askers.add(asker);
      return source.request(wrap(asker), id, waitMs);
    },
    forget: (asker) => {
      source.forget(wrap(asker));
    },
    answerFor: (answer, pid) => source.answerFor(answer, pid),
  };
  return { tables, clock, askers, answered };
}

test('four real ps_scan runs being tracked: the requests waiting when the first is due share one ps of the server', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'table-source-'));
  symlinkSync(COUNTING_PS, join(dir, 'ps'));
  const runs = join(dir, 'runs');
  const path = `${dir}:${dirname(process.execPath)}:/usr/bin:/bin`;
  process.env['PATH'] = path;
  const { tables, clock, askers, answered } = countedSource(path);
  const fakes = [0, 1, 2, 3].map(() => startFake('slow', { env: { FAKE_CLAUDE_HOLD_MS: 'hang' }, cleanup: PS_SCAN, tables }));
  let driver: NodeJS.Timeout | null = null;
  try {
    // Each run's tracking asks for its first table one tracking interval after its start, offering to wait that long.
    await pollUntil(
      () => `4 supervisors asking (${askers.size})`,
      () => askers.size === 4,
      WAIT,
    );
    const serverRuns = (): number => lines(runs).filter((ppid) => ppid === String(process.pid)).length;
    assert.equal(serverRuns(), 0, 'nothing due yet: no ps');
    clock.advance(TABLE_REQUEST_WAIT_MAX_MS);
    await pollUntil(
      () => `4 supervisors answered (${answered.size})`,
      () => answered.size === 4,
      WAIT,
    );
    assert.equal(serverRuns(), 1, 'one ps of the server answered the four');
    // From here the source keeps real time, and the runs end through their ladders.
    let last = performance.now();
    driver = setInterval(() => {
      const now = performance.now();
      clock.advance(now - last);
      last = now;
    }, 10);
    for (const fake of fakes) fake.run.terminate('cancel');
    const outcomes = await Promise.all(fakes.map((f) => f.run.done));
    for (const outcome of outcomes) assert.equal(outcome.cleanup?.proof, 'ps_scan', JSON.stringify(outcome.cleanup));
  } finally {
    if (driver !== null) clearInterval(driver);
    for (const fake of fakes) fake.run.killSupervisor();
    await Promise.all(fakes.map((f) => f.run.done));
    for (const fake of fakes) fake.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a real ps_scan supervisor whose server was SIGKILLed reads its tables with its own ps and ends the run', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'table-source-'));
  symlinkSync(COUNTING_PS, join(dir, 'ps'));
  const runs = join(dir, 'runs');
  const readyFile = join(dir, 'ready');
  const parent = spawn(process.execPath, ['--import', 'tsx', PARENT, 'slow', readyFile, 'ps_scan'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, PATH: `${dir}:${dirname(process.execPath)}:/usr/bin:/bin` },
  });
  let out = '';
  parent.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const parentClosed = new Promise((resolve) => parent.once('close', resolve));
  const victims: (ProcessIdentity | null)[] = [];
  try {
    const line = await pollUntil('the parent readiness', () => out.split('\n').find((l) => l.includes('supervisorPid')), WAIT);
    const supervisor = identify(num(parseObj(line, "the parent's readiness line")['supervisorPid'], 'supervisorPid'));
    assert.ok(supervisor);
    const native = await waitForReady(readyFile, 'streaming');
    victims.push(supervisor, native);
    parent.kill('SIGKILL');
    await parentClosed;
    const before = lines(runs).length;
    await waitForGone([supervisor, native], 20_000);
    // (A ps the server started just before it died may log too, as an orphan: only the supervisor's count.)
    const own = lines(runs)
      .slice(before)
      .filter((ppid) => ppid === String(supervisor.pid));
    assert.ok(own.length >= 1, 'the ladder read its tables with its own ps after the server was gone');
  } finally {
    killIfRunning(victims);
    parent.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
