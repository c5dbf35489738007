// The operator's budget ledger and the cost a settled run is charged: pure, no process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chargeSettledRun,
  createBudgetLedger,
  createConversationTotals,
  getRunCostUsd,
  MAX_LEDGER_MICROS,
  MAX_REMEMBERED_CONVERSATIONS,
  MICROS_PER_USD,
  type BudgetAdmission,
} from '../../lib/runs/budget.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import type { SessionIntent } from '../../lib/runs/types.ts';

function granted(admission: BudgetAdmission): { ticket: number; capUsd: number } {
  assert.equal(admission.kind, 'granted', JSON.stringify(admission));
  if (admission.kind !== 'granted') throw new Error('unreachable');
  return admission;
}

test('a run gets what remains; its cap is reserved until it reports, then it is charged what it reported', () => {
  const ledger = createBudgetLedger(0.1);
  const a = granted(ledger.admit(null));
  assert.equal(a.capUsd, 0.1);
  assert.deepEqual(ledger.snapshot(), {
    limit_usd: 0.1,
    spent_usd: 0,
    reserved_usd: 0.1,
    remaining_usd: 0.1,
    available_usd: 0,
    runs_reserving: 1,
  });
  ledger.settle(a.ticket, 0.049148);
  assert.deepEqual(ledger.snapshot(), {
    limit_usd: 0.1,
    spent_usd: 0.049148,
    reserved_usd: 0,
    remaining_usd: 0.050852,
    available_usd: 0.050852,
    runs_reserving: 0,
  });
  const b = granted(ledger.admit(null));
  assert.equal(b.capUsd, 0.050852, 'exactly what remains, no float drift');
  ledger.settle(b.ticket, 0.049148);
  assert.equal(ledger.snapshot().remaining_usd, 0.001704);
  const c = granted(ledger.admit(null));
  ledger.settle(c.ticket, 0.049148); // the native makes the call that crosses its cap
  assert.deepEqual(ledger.admit(null), { kind: 'exhausted', remainingUsd: 0 });
  const spent = ledger.snapshot();
  assert.equal(spent.spent_usd, 0.147444, 'spent may pass the limit by the crossing call');
  assert.equal(spent.remaining_usd, 0);
});

test('while one unreported run holds the rest, a second start is refused as reserved; a caller cap reserves only itself', () => {
  const ledger = createBudgetLedger(1);
  const whole = granted(ledger.admit(null));
  assert.deepEqual(ledger.admit(null), { kind: 'reserved', remainingUsd: 1, reservedUsd: 1 });
  assert.deepEqual(ledger.admit(0.2), { kind: 'reserved', remainingUsd: 1, reservedUsd: 1 }, 'a small cap does not fit either');
  ledger.settle(whole.ticket, 0.25);
  const small = granted(ledger.admit(0.2));
  assert.equal(small.capUsd, 0.2, 'the caller asked for less than remains');
  const rest = granted(ledger.admit(5));
  assert.equal(rest.capUsd, 0.55, 'a caller cap above what remains is lowered to it');
  assert.equal(ledger.snapshot().available_usd, 0);
  assert.equal(ledger.snapshot().runs_reserving, 2);
  ledger.cancel(rest.ticket);
  assert.equal(ledger.snapshot().available_usd, 0.55, 'a run whose start failed frees its cap and is charged nothing');
  assert.equal(ledger.snapshot().spent_usd, 0.25);
});

test('a run that settles without a reported cost is charged its whole cap', () => {
  const ledger = createBudgetLedger(0.5);
  const a = granted(ledger.admit(0.3));
  ledger.settle(a.ticket, null);
  assert.deepEqual(ledger.snapshot(), {
    limit_usd: 0.5,
    spent_usd: 0.3,
    reserved_usd: 0,
    remaining_usd: 0.2,
    available_usd: 0.2,
    runs_reserving: 0,
  });
  ledger.settle(a.ticket, 0.01);
  assert.equal(ledger.snapshot().spent_usd, 0.3, 'a ticket settles once');
});

test('the budget at its bound: the last micro-dollar is granted, then nothing', () => {
  const ledger = createBudgetLedger(0.000002);
  const a = granted(ledger.admit(null));
  ledger.settle(a.ticket, 0.000001);
  assert.equal(granted(ledger.admit(null)).capUsd, 0.000001);
  const tiny = createBudgetLedger(1);
  assert.equal(granted(tiny.admit(0.0000001)).capUsd, 0.000001, 'a cap below one micro-dollar still gets one (the native refuses 0)');
});

const usage = (cost: number): JsonObject => ({ inputTokens: 1, costUSD: cost });

test('the cost charged: this invocation (model_usage_since_last_result), not the conversation total', () => {
  const resumed: JsonObject = {
    type: 'result',
    total_cost_usd: 0.098436,
    model_usage_since_last_result: { 'claude-opus-5-5': usage(0.04928) },
  };
  assert.equal(getRunCostUsd({ final: resumed, events_total: 3, malformed_lines: 0 }, null), 0.04928);
  const twoModels: JsonObject = { total_cost_usd: 1, model_usage_since_last_result: { a: usage(0.25), b: usage(0.5) } };
  assert.equal(getRunCostUsd({ final: twoModels, events_total: 3, malformed_lines: 0 }, null), 0.75);
  const apiError: JsonObject = { total_cost_usd: 0, model_usage_since_last_result: {} };
  assert.equal(getRunCostUsd({ final: apiError, events_total: 2, malformed_lines: 0 }, null), 0);
  const noPerCall: JsonObject = { total_cost_usd: 0.2 };
  assert.equal(
    getRunCostUsd({ final: noPerCall, events_total: 1, malformed_lines: 0 }, null),
    0.2,
    'fallback: the cumulative total, the conversation before this run not being known (over-charges a resume)',
  );
  const brokenPerCall: JsonObject = { total_cost_usd: 0.2, model_usage_since_last_result: { a: { inputTokens: 1 } } };
  assert.equal(getRunCostUsd({ final: brokenPerCall, events_total: 1, malformed_lines: 0 }, null), 0.2);
  assert.equal(getRunCostUsd({ final: { type: 'result' }, events_total: 1, malformed_lines: 0 }, null), null, 'no cost in the final event');
  assert.equal(getRunCostUsd({ final: null, events_total: 5, malformed_lines: 0 }, null), null, 'killed without a final event: unreported');
  assert.equal(getRunCostUsd({ final: null, events_total: 0, malformed_lines: 1 }, null), null, 'it printed something');
  assert.equal(getRunCostUsd({ final: null, events_total: 0, malformed_lines: 0 }, null), 0, 'it printed nothing: no request was sent');
});

test('a reported cost is clamped to what the ledger holds exactly: spent saturates there and reads back as a number', () => {
  const maxUsd = MAX_LEDGER_MICROS / MICROS_PER_USD;
  for (const huge of [1.8e302, Number.MAX_VALUE, Infinity]) {
    const ledger = createBudgetLedger(1_000_000);
    ledger.settle(granted(ledger.admit(0.5)).ticket, huge);
    const after = ledger.snapshot();
    assert.equal(after.spent_usd, maxUsd, `${huge}: spent is the ledger's bound, not Infinity`);
    assert.equal(JSON.parse(JSON.stringify(after))['spent_usd'], maxUsd, 'the capabilities resource says a number, not null');
    assert.equal(after.remaining_usd, 0);
    assert.deepEqual(ledger.admit(null), { kind: 'exhausted', remainingUsd: 0 }, 'it fails closed');
  }
  const two = createBudgetLedger(1_000_000);
  const [first, second] = [granted(two.admit(1)), granted(two.admit(1))];
  two.settle(first.ticket, maxUsd - 1);
  assert.equal(two.snapshot().spent_usd, maxUsd - 1, 'below the bound a charge is exact');
  two.settle(second.ticket, 5);
  assert.equal(two.snapshot().spent_usd, maxUsd, 'a sum past the bound saturates at it');
  const negative = createBudgetLedger(1);
  negative.settle(granted(negative.admit(0.5)).ticket, 0.25);
  negative.settle(granted(negative.admit(0.5)).ticket, -0.2);
  assert.equal(negative.snapshot().spent_usd, 0.25, 'a negative figure charges 0, it never refunds');
  negative.settle(granted(negative.admit(0.5)).ticket, NaN);
  assert.equal(negative.snapshot().spent_usd, 0.75, 'NaN is unreported: the whole cap');
});

test('no per-call cost (missing, empty, or a model without one): the growth of the conversation total is charged', () => {
  const facts = (final: JsonObject) => ({ final, events_total: 4, malformed_lines: 0 });
  const emptyPerCall: JsonObject = { session_id: 's', total_cost_usd: 0.75, model_usage_since_last_result: {} };
  assert.equal(getRunCostUsd(facts(emptyPerCall), null), 0.75, 'a grown total beside an empty per-call map is not 0');
  assert.equal(getRunCostUsd(facts(emptyPerCall), 0.25), 0.5, 'its growth over the total before this run');
  assert.equal(getRunCostUsd(facts(emptyPerCall), 0.75), 0, 'no growth: an API error on resume');
  assert.equal(getRunCostUsd(facts({ total_cost_usd: 0.75 }), 0.25), 0.5, 'missing per-call map: the growth as well');
  const noCost: JsonObject = { total_cost_usd: 0.75, model_usage_since_last_result: { a: { inputTokens: 1 } } };
  assert.equal(getRunCostUsd(facts(noCost), 0.25), 0.5, 'a model without a cost: the growth');
  assert.equal(getRunCostUsd(facts(emptyPerCall), 1), 0.75, 'a total below the known one: the whole total, never less');
  const perCall: JsonObject = { total_cost_usd: 0.75, model_usage_since_last_result: { a: usage(0.125) } };
  assert.equal(getRunCostUsd(facts(perCall), 0.25), 0.125, 'a per-call cost wins over the growth');
});

test('the conversation totals: a resume is charged its growth, a fork is measured from the conversation it resumes', () => {
  const ledger = createBudgetLedger(10);
  const totals = createConversationTotals();
  const run = (session: SessionIntent, sessionId: string, total: number): number => {
    const before = ledger.snapshot().spent_usd;
    const final: JsonObject = { session_id: sessionId, total_cost_usd: total, model_usage_since_last_result: {} };
    chargeSettledRun(ledger, totals, granted(ledger.admit(1)).ticket, session, { final, events_total: 3, malformed_lines: 0 });
    return Math.round((ledger.snapshot().spent_usd - before) * MICROS_PER_USD) / MICROS_PER_USD;
  };
  assert.equal(run({ kind: 'fresh' }, 'a', 0.25), 0.25);
  assert.equal(totals.get('a'), 0.25);
  assert.equal(run({ kind: 'resume', sessionId: 'a', fork: false }, 'a', 0.75), 0.5);
  assert.equal(run({ kind: 'continue', fork: false }, 'a', 1), 0.25, 'continue: measured from the session it reports');
  assert.equal(run({ kind: 'resume', sessionId: 'a', fork: true }, 'b', 1.5), 0.5, 'a fork: from the resumed one');
  assert.equal(totals.get('b'), 1.5);
  assert.equal(run({ kind: 'resume', sessionId: 'elsewhere', fork: false }, 'elsewhere', 2), 2, 'not seen here: the whole total');
  chargeSettledRun(ledger, totals, granted(ledger.admit(1)).ticket, { kind: 'resume', sessionId: 'a', fork: false }, null);
  assert.equal(ledger.snapshot().spent_usd, 4.5, 'unreported: the whole cap, and nothing remembered');
  assert.equal(totals.get('a'), 1);
});

test('the conversation totals at their bound: the least recently reported is forgotten first', () => {
  const totals = createConversationTotals();
  const record = (id: string, total: number): void => totals.record({ session_id: id, total_cost_usd: total });
  for (let i = 0; i < MAX_REMEMBERED_CONVERSATIONS; i++) record(`s${i}`, i);
  for (let i = 0; i < MAX_REMEMBERED_CONVERSATIONS; i++) assert.equal(totals.get(`s${i}`), i, 'at the bound every one is remembered');
  record('s0', 0.5); // reported again: now the most recent
  record('new', 1);
  assert.equal(totals.get('s0'), 0.5);
  assert.equal(totals.get('s1'), null, 'one past the bound: the least recently reported is gone');
  assert.equal(totals.get('s2'), 2);
  assert.equal(totals.get('new'), 1);
  totals.record({ session_id: 'x' });
  totals.record({ total_cost_usd: 3 });
  totals.record(null);
  assert.equal(totals.get('x'), null, 'a final without both a session and a total changes nothing');
  assert.equal(totals.get('s2'), 2);
  assert.equal(totals.get(null), null);
});
