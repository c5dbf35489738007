// An open run's conversation (keep_open): queue and turn bookkeeping, each bound at its edge, the idle bound,
// the turn limit and every way it ends, against a recording stdin and a manual clock. Pure, no process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createOpenConversation,
  MAX_QUEUED_MESSAGE_BYTES,
  MAX_QUEUED_MESSAGES,
  MAX_TURN_RESULT_CHARS,
  MAX_TURNS_KEPT,
  type OpenConversation,
} from '../../lib/runs/turns.ts';
import { createBudgetLedger } from '../../lib/runs/budget.ts';
import { isToolError } from '../../lib/tool-errors.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import { createManualClock } from '../helpers/manual-clock.ts';

interface Rig {
  readonly open: OpenConversation;
  readonly clock: ReturnType<typeof createManualClock>;
  /** The messages written to stdin, as their text. */
  readonly written: string[];
  readonly states: string[];
  ended(): boolean;
}

function rig(options: { idleMs?: number; turnLimit?: number; stdinGone?: boolean } = {}): Rig {
  const clock = createManualClock(1000);
  const written: string[] = [];
  const states: string[] = [];
  let ended = false;
  const input = {
    send(data: string): boolean {
      if (ended || options.stdinGone === true) return false;
      const line = JSON.parse(data) as { message: { content: string } };
      written.push(line.message.content);
      return true;
    },
    end() {
      ended = true;
    },
  };
  const open = createOpenConversation(
    { idleMs: options.idleMs ?? 60_000, turnLimit: options.turnLimit ?? 100 },
    { clock, input, onState: (s) => states.push(s) },
  );
  return { open, clock, written, states, ended: () => ended };
}

const final = (text: string, extra: JsonObject = {}): JsonObject => ({
  type: 'result',
  subtype: 'success',
  is_error: false,
  result: text,
  session_id: 's-1',
  usage: { input_tokens: 3 },
  duration_ms: 5,
  ...extra,
});

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isToolError(error)) return error.code;
    throw error;
  }
  return 'none';
}

test('a message sent while idle is written at once; one sent during a turn waits for its result, in order', () => {
  const r = rig();
  assert.equal(r.open.phase(), 'running', 'the start prompt is the first turn');
  assert.deepEqual(r.open.send('a'), { turn: 2, queued: true, ahead: 0 });
  assert.deepEqual(r.open.send('b'), { turn: 3, queued: true, ahead: 1 });
  assert.deepEqual(r.written, [], 'nothing is written during a running turn');
  r.open.onTurnResult(final('one'));
  assert.deepEqual(r.written, ['a'], 'the next queued message only after the result');
  assert.equal(r.open.phase(), 'running');
  r.open.onTurnResult(final('two'));
  assert.deepEqual(r.written, ['a', 'b']);
  r.open.onTurnResult(final('three'));
  assert.equal(r.open.phase(), 'idle');
  assert.deepEqual(r.states, ['running', 'running', 'idle']);
  assert.deepEqual(
    r.open.turns().map((t) => [t.turn, t.result, t.is_error]),
    [
      [1, 'one', false],
      [2, 'two', false],
      [3, 'three', false],
    ],
  );
  assert.deepEqual(r.open.send('c'), { turn: 4, queued: false, ahead: 0 });
  assert.deepEqual(r.written, ['a', 'b', 'c'], 'idle: written at once');
  assert.equal(r.ended(), false);
});

test(`the queue holds ${MAX_QUEUED_MESSAGES} messages; one more is send_queue_full and nothing changes`, () => {
  const r = rig();
  for (let i = 0; i < MAX_QUEUED_MESSAGES; i++) r.open.send(`m${i}`);
  assert.equal(r.open.report().queued, MAX_QUEUED_MESSAGES);
  assert.equal(
    codeOf(() => r.open.send('over')),
    'send_queue_full',
  );
  assert.equal(r.open.report().queued, MAX_QUEUED_MESSAGES);
  r.open.onTurnResult(final('one'));
  assert.deepEqual(r.written, ['m0']);
  assert.deepEqual(r.open.send('fits again'), { turn: MAX_QUEUED_MESSAGES + 2, queued: true, ahead: MAX_QUEUED_MESSAGES - 1 });
});

test(`the queue holds ${MAX_QUEUED_MESSAGE_BYTES} bytes; one byte more is send_queue_full`, () => {
  const r = rig();
  const half = MAX_QUEUED_MESSAGE_BYTES / 2;
  r.open.send('é'.repeat(half / 2)); // 2 bytes each
  r.open.send('x'.repeat(half - 1));
  assert.equal(
    codeOf(() => r.open.send('yz')),
    'send_queue_full',
  );
  assert.deepEqual(r.open.send('y'), { turn: 4, queued: true, ahead: 2 }, 'exactly at the bound is accepted');
  assert.equal(
    codeOf(() => r.open.send('z')),
    'send_queue_full',
  );
});

test('the turn limit: sends past it are refused, and the run ends after its last turn', () => {
  const r = rig({ turnLimit: 3 });
  r.open.send('a');
  r.open.send('b');
  assert.equal(
    codeOf(() => r.open.send('c')),
    'turn_limit_reached',
    'prompt + 2 queued = the limit',
  );
  r.open.onTurnResult(final('1'));
  r.open.onTurnResult(final('2'));
  assert.equal(r.ended(), false);
  r.open.onTurnResult(final('3'));
  assert.equal(r.ended(), true, 'stdin ends after the last turn');
  assert.deepEqual([r.open.phase(), r.open.report().close_reason], ['ended', 'turn_limit']);
  assert.equal(
    codeOf(() => r.open.send('d')),
    'run_not_open',
  );
});

test('the idle bound ends an idle run; a message written meanwhile re-arms it', () => {
  const r = rig({ idleMs: 1000 });
  r.open.onTurnResult(final('1'));
  r.clock.advance(999);
  assert.equal(r.ended(), false);
  r.open.send('a');
  r.clock.advance(5000);
  assert.equal(r.ended(), false, 'a running turn is not idle');
  r.open.onTurnResult(final('2'));
  r.clock.advance(999);
  assert.equal(r.ended(), false);
  r.clock.advance(1);
  assert.equal(r.ended(), true);
  assert.equal(r.open.report().close_reason, 'idle_bound');
  assert.equal(r.clock.pending(), 0, 'no timer outlives the conversation');
});

test('close: at once when idle; after the running turn otherwise, dropping the queue; then sends are refused', () => {
  const idle = rig();
  idle.open.onTurnResult(final('1'));
  idle.open.close('close');
  assert.deepEqual([idle.ended(), idle.open.phase(), idle.open.report().close_reason], [true, 'ended', 'close']);
  assert.equal(idle.clock.pending(), 0);

  const busy = rig();
  busy.open.send('queued');
  busy.open.close('release');
  assert.deepEqual([busy.ended(), busy.open.phase(), busy.open.report().queued], [false, 'closing', 0]);
  assert.equal(
    codeOf(() => busy.open.send('late')),
    'run_not_open',
  );
  busy.open.onTurnResult(final('1'));
  assert.deepEqual([busy.ended(), busy.written, busy.open.report().close_reason], [true, [], 'release']);
  assert.equal(busy.open.turns().length, 1, 'the running turn is still recorded');
});

test('a cancel ends only an idle run at once (endIfIdle); a running turn is left to the interrupt', () => {
  const r = rig();
  assert.equal(r.open.endIfIdle('cancel'), false);
  assert.equal(r.ended(), false);
  r.open.onTurnResult(final('1'));
  assert.equal(r.open.endIfIdle('cancel'), true);
  assert.deepEqual([r.ended(), r.open.report().close_reason], [true, 'cancel']);
});

test('a stdin that no longer takes lines ends the conversation: run_not_open, nothing queued', () => {
  const r = rig({ stdinGone: true });
  r.open.onTurnResult(final('1'));
  assert.equal(
    codeOf(() => r.open.send('a')),
    'run_not_open',
  );
  assert.deepEqual([r.open.phase(), r.open.report().close_reason, r.open.unanswered()], ['ended', 'run_ended', false]);
});

test(`turn records: per-turn cost from each result, at most ${MAX_TURNS_KEPT} kept, long answers cut`, () => {
  const r = rig();
  const costs: Array<number | null> = [];
  r.open.onTurn((t) => costs.push(t.cost_usd));
  r.open.onTurnResult(final('1', { total_cost_usd: 0.5 }));
  r.open.send('a');
  r.open.onTurnResult(final('2', { total_cost_usd: 0.75 }));
  r.open.send('b');
  r.open.onTurnResult(final('3', { total_cost_usd: 0.9, model_usage_since_last_result: { m: { costUSD: 0.1 } } }));
  assert.deepEqual(costs, [0.5, 0.25, 0.1], 'growth of the total, or this call’s own usage when reported');
  r.open.send('c');
  r.open.onTurnResult(null);
  assert.deepEqual(
    [r.open.turns().at(-1)?.is_error, r.open.turns().at(-1)?.result, costs.at(-1)],
    [true, null, null],
    'an invalid result is an error turn without a cost',
  );
  for (let i = 0; i < MAX_TURNS_KEPT; i++) {
    r.open.send(`m${i}`);
    r.open.onTurnResult(final('x'.repeat(MAX_TURN_RESULT_CHARS + 1)));
  }
  const report = r.open.report();
  assert.deepEqual([r.open.turns().length, report.turns_total, report.turns_dropped], [MAX_TURNS_KEPT, MAX_TURNS_KEPT + 4, 4]);
  assert.equal(r.open.turns()[0]?.turn, 5);
  assert.deepEqual([r.open.turns().at(-1)?.result?.length, r.open.turns().at(-1)?.result_truncated], [MAX_TURN_RESULT_CHARS, true]);
});

test('whenQuiet resolves when the run is idle with nothing queued, or ended; unanswered tracks a written message', async () => {
  const r = rig();
  let quiet = false;
  void r.open.whenQuiet().then(() => (quiet = true));
  r.open.send('a');
  r.open.onTurnResult(final('1'));
  await Promise.resolve();
  assert.equal(quiet, false, 'the queued message runs: not quiet yet');
  assert.equal(r.open.unanswered(), true);
  r.open.onTurnResult(final('2'));
  await Promise.resolve();
  assert.equal(quiet, true);
  assert.equal(r.open.unanswered(), false);
});

test('the ledger charges a turn and shrinks the run reservation by it; an unreported turn takes the rest of the cap', () => {
  const ledger = createBudgetLedger(1);
  const admission = ledger.admit(0.5);
  assert.equal(admission.kind, 'granted');
  if (admission.kind !== 'granted') return;
  ledger.charge(admission.ticket, 0.2);
  assert.deepEqual([ledger.snapshot().spent_usd, ledger.capLeftUsd(admission.ticket)], [0.2, 0.3]);
  ledger.charge(admission.ticket, null);
  assert.deepEqual([ledger.snapshot().spent_usd, ledger.capLeftUsd(admission.ticket)], [0.5, 0]);
  ledger.settle(admission.ticket, 0);
  assert.deepEqual([ledger.snapshot().spent_usd, ledger.capLeftUsd(admission.ticket), ledger.snapshot().runs_reserving], [0.5, null, 0]);
});

test('a run that ends with messages still queued drops them: nothing is written, queued reads 0', () => {
  const r = rig();
  r.open.send('never');
  r.open.onRunEnded();
  assert.deepEqual([r.open.phase(), r.open.report().queued, r.open.report().close_reason, r.written], ['ended', 0, 'run_ended', []]);
  assert.equal(r.ended(), true);
});
