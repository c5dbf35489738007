/** The server's one table source: coalescing, the order of batches and the per-supervisor bound, on a manual clock. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTableSource, TABLE_GATHER_MS, type TableAsker } from '../../../lib/supervisor/parent/table-source.ts';
import { TABLE_ANSWER_LINE_MAX_BYTES, TABLE_REQUESTS_PENDING_MAX, type TableAnswer } from '../../../lib/supervisor/protocol.ts';
import { ROWS_ANSWER_OUTPUT_MAX_BYTES } from '../../../lib/supervisor/parent/table-view.ts';
import { psFailure, type PsOutput } from '../../../lib/process/ps-table.ts';
import { createManualClock } from '../../helpers/manual-clock.ts';

/** A ps runner whose runs the spec finishes by hand, in order. */
function fakePs(): { runPs: () => Promise<PsOutput>; calls: () => number; finish: (output: PsOutput) => Promise<void> } {
  const running: Array<(output: PsOutput) => void> = [];
  let calls = 0;
  return {
    runPs: () => {
      calls++;
      return new Promise((resolve) => running.push(resolve));
    },
    calls: () => calls,
    finish: async (output) => {
      const next = running.shift();
      assert.ok(next, 'a ps is running');
      next(output);
      // Let the source's continuation (answers, the next gather) run.
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

interface Answered {
  readonly id: number;
  readonly answer: TableAnswer;
  readonly flush: () => void;
}

function asker(): TableAsker & { answers: Answered[] } {
  const answers: Answered[] = [];
  return {
    answers,
    answer(id, answer, flushed) {
      answers.push({ id, answer, flush: flushed });
    },
  };
}

const table = (text: string): PsOutput => ({ kind: 'output', stdout: Buffer.from(text) });

test('four supervisors asking within the gather window share one ps, and each gets its own id answered', async () => {
  const clock = createManualClock();
  const ps = fakePs();
  const source = createTableSource({ runPs: ps.runPs, clock });
  const askers = [asker(), asker(), asker(), asker()];
  askers.forEach((a, i) => assert.equal(source.request(a, 10 + i, 0), true));
  assert.equal(ps.calls(), 0, 'no ps before the gather window ends');
  clock.advance(TABLE_GATHER_MS - 1);
  assert.equal(ps.calls(), 0);
  clock.advance(1);
  assert.equal(ps.calls(), 1);
  const output = table('one table\n');
  await ps.finish(output);
  assert.equal(ps.calls(), 1, 'one ps for all four');
  askers.forEach((a, i) =>
    assert.deepEqual(
      a.answers.map(({ id, answer }) => ({ id, answer })),
      [{ id: 10 + i, answer: output }],
    ),
  );
  assert.equal(clock.pending(), 0, 'no timer once nothing waits');
});

test('a request that arrives while a ps runs waits for the next ps, which starts only after the first ended', async () => {
  const clock = createManualClock();
  const ps = fakePs();
  const source = createTableSource({ runPs: ps.runPs, clock });
  const [early, late] = [asker(), asker()];
  source.request(early, 1, 0);
  clock.advance(TABLE_GATHER_MS);
  assert.equal(ps.calls(), 1);
  source.request(late, 7, 0);
  clock.advance(10 * TABLE_GATHER_MS);
  assert.equal(ps.calls(), 1, 'never two ps at once');
  const first = table('first\n');
  await ps.finish(first);
  assert.deepEqual(
    early.answers.map((a) => a.answer),
    [first],
  );
  assert.deepEqual(late.answers, [], 'the table started before the request arrived: not its answer');
  clock.advance(TABLE_GATHER_MS);
  assert.equal(ps.calls(), 2);
  const second = table('second\n');
  await ps.finish(second);
  assert.deepEqual(
    late.answers.map(({ id, answer }) => ({ id, answer })),
    [{ id: 7, answer: second }],
  );
  assert.equal(early.answers.length, 1);
});

test('nothing runs and no timer waits while nobody asks', () => {
  const clock = createManualClock();
  const ps = fakePs();
  createTableSource({ runPs: ps.runPs, clock });
  clock.advance(60_000);
  assert.equal(ps.calls(), 0);
  assert.equal(clock.pending(), 0);
});

test('a supervisor holds at most TABLE_REQUESTS_PENDING_MAX requests, until their answers flushed', async () => {
  const clock = createManualClock();
  const ps = fakePs();
  const source = createTableSource({ runPs: ps.runPs, clock });
  const a = asker();
  const other = asker();
  for (let id = 0; id < TABLE_REQUESTS_PENDING_MAX; id++) assert.equal(source.request(a, id, 0), true, `request ${id}`);
  assert.equal(source.request(a, 99, 0), false, 'one over the bound is refused');
  assert.equal(source.request(other, 0, 0), true, 'the bound is per supervisor');
  clock.advance(TABLE_GATHER_MS);
  await ps.finish(table('t\n'));
  assert.equal(a.answers.length, TABLE_REQUESTS_PENDING_MAX);
  assert.equal(source.request(a, 100, 0), false, 'answered but not flushed still counts');
  a.answers[0]!.flush();
  assert.equal(source.request(a, 101, 0), true, 'one flushed makes room for one');
  assert.equal(source.request(a, 102, 0), false);
});

test('a forgotten supervisor is not answered, and its gather timer goes when nobody else waits', async () => {
  const clock = createManualClock();
  const ps = fakePs();
  const source = createTableSource({ runPs: ps.runPs, clock });
  const [gone, stays] = [asker(), asker()];
  source.request(gone, 1, 0);
  source.forget(gone);
  assert.equal(clock.pending(), 0, 'nothing waits: no timer');
  clock.advance(TABLE_GATHER_MS);
  assert.equal(ps.calls(), 0);
  source.request(gone, 2, 0);
  source.request(stays, 1, 0);
  clock.advance(TABLE_GATHER_MS);
  source.forget(gone);
  await ps.finish(table('t\n'));
  assert.deepEqual(gone.answers, [], 'its supervisor ended while the ps ran');
  assert.equal(stays.answers.length, 1);
});

test('a failure of ps is every asker answer; a runner that throws is a ps failure too, never a crash', async () => {
  const clock = createManualClock();
  const ps = fakePs();
  const source = createTableSource({ runPs: ps.runPs, clock });
  const [a, b] = [asker(), asker()];
  source.request(a, 1, 0);
  source.request(b, 2, 0);
  clock.advance(TABLE_GATHER_MS);
  const failure = psFailure('ps_timeout', 'did not finish within 10000 ms (PS_TIMEOUT_MS); it was killed');
  await ps.finish(failure);
  assert.deepEqual(
    [...a.answers, ...b.answers].map((x) => x.answer),
    [failure, failure],
  );
  const throwing = createTableSource({ runPs: () => Promise.reject(new Error('boom')), clock });
  const c = asker();
  throwing.request(c, 3, 0);
  clock.advance(TABLE_GATHER_MS);
  await new Promise((resolve) => setImmediate(resolve));
  const answer = c.answers[0]?.answer;
  assert.equal(answer?.kind, 'failure');
  assert.equal(answer.kind === 'failure' ? answer.code : null, 'ps_spawn_failed');
});

test('runs tracked at different phases share one ps: each request waits at most what it offered', async () => {
  const clock = createManualClock();
  const ps = fakePs();
  const source = createTableSource({ runPs: ps.runPs, clock });
  const askers = [asker(), asker(), asker(), asker()];
  const INTERVAL_MS = 2000;
  // Four runs tracked every 2 s, asking half a second apart.
  for (const [i, a] of askers.entries()) {
    source.request(a, 0, INTERVAL_MS);
    if (i < askers.length - 1) clock.advance(500);
  }
  assert.equal(ps.calls(), 0);
  clock.advance(INTERVAL_MS - 3 * 500 - 1);
  assert.equal(ps.calls(), 0, 'the first request is not due yet');
  clock.advance(1);
  assert.equal(ps.calls(), 1, 'due: one ps, for all four');
  await ps.finish(table('t\n'));
  assert.ok(askers.every((a) => a.answers.length === 1));
  assert.equal(clock.pending(), 0);
});

test('a request with no wait takes every waiting one along, and only the gather delays it', async () => {
  const clock = createManualClock();
  const ps = fakePs();
  const source = createTableSource({ runPs: ps.runPs, clock });
  const [tracking, ladder] = [asker(), asker()];
  source.request(tracking, 0, 5000);
  clock.advance(1000);
  source.request(ladder, 0, 0);
  clock.advance(TABLE_GATHER_MS - 1);
  assert.equal(ps.calls(), 0);
  clock.advance(1);
  assert.equal(ps.calls(), 1);
  await ps.finish(table('t\n'));
  assert.equal(tracking.answers.length, 1, 'the waiting request shares the ladder’s ps');
  assert.equal(ladder.answers.length, 1);
  assert.equal(clock.pending(), 0, 'its own later timer is gone');
  // After a ps, a request that waited through it is answered by the next one as soon as it is due.
  source.request(tracking, 1, 0);
  clock.advance(TABLE_GATHER_MS);
  source.request(ladder, 1, 3000);
  assert.equal(ps.calls(), 2);
  await ps.finish(table('u\n'));
  assert.equal(ladder.answers.length, 1, 'it arrived during the ps');
  clock.advance(2999);
  assert.equal(ps.calls(), 2);
  clock.advance(1);
  assert.equal(ps.calls(), 3);
});

const PS_LINE = (pid: number, ppid: number, pgid: number, start: string, command: string): string =>
  `${String(pid).padStart(7)} ${String(ppid).padStart(7)} ${String(pgid).padStart(7)} S    ${start} ${command}\n`;

test('each supervisor is sent only the rows it can need, from one parse of the output; bad output is the failure naming ps', () => {
  const source = createTableSource({ runPs: () => new Promise(() => {}), clock: createManualClock() });
  const text =
    PS_LINE(1, 0, 1, 'Thu Dec  3 08:00:00 2026', 'init') +
    PS_LINE(50, 1, 50, 'Thu Dec  3 09:00:00 2026', 'old daemon') +
    PS_LINE(100, 1, 100, 'Thu Dec  3 10:00:00 2026', 'supervisor a') +
    PS_LINE(200, 1, 200, 'Thu Dec  3 11:00:00 2026', 'supervisor b') +
    PS_LINE(210, 200, 200, 'Thu Dec  3 11:00:01 2026', 'native b');
  const output: PsOutput = { kind: 'output', stdout: Buffer.from(text) };
  const rowsOf = (answer: TableAnswer): number[] => (answer.kind === 'rows' ? answer.rows.map((r) => r.pid) : []);
  const forA = source.answerFor(output, 100);
  const forB = source.answerFor(output, 200);
  assert.equal(forA.kind, 'rows');
  // a started at 10:00: b and its native came later (candidates for a's orphans), the old daemon did not.
  assert.deepEqual(rowsOf(forA), [1, 100, 200, 210]);
  assert.deepEqual(rowsOf(forB), [1, 200, 210]);
  assert.deepEqual(rowsOf(source.answerFor(output, 999)), [], 'a table without the supervisor: no rows (its tracker refuses it)');
  assert.equal(source.answerFor(output, undefined), output, 'a supervisor of unknown pid gets the raw output');
  const cut: PsOutput = { kind: 'output', stdout: Buffer.from(text.slice(0, -1)) };
  const failure = source.answerFor(cut, 100);
  assert.equal(failure.kind, 'failure');
  assert.ok(failure.kind === 'failure' && failure.code === 'ps_output_invalid' && failure.message.startsWith('ps: '));
  const failed = psFailure('ps_timeout', 'took too long');
  assert.equal(source.answerFor(failed, 100), failed);
});

test('output past ROWS_ANSWER_OUTPUT_MAX_BYTES goes raw (its rows might not fit one answer line)', () => {
  const source = createTableSource({ runPs: () => new Promise(() => {}), clock: createManualClock() });
  const big: PsOutput = { kind: 'output', stdout: Buffer.alloc(ROWS_ANSWER_OUTPUT_MAX_BYTES + 1, 0x20) };
  assert.equal(source.answerFor(big, 100), big);
  assert.ok(6 * ROWS_ANSWER_OUTPUT_MAX_BYTES + 1024 <= TABLE_ANSWER_LINE_MAX_BYTES);
});
