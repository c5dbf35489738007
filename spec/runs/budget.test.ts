// The operator's budget ledger and the cost a settled run is charged: pure, no process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBudgetLedger, getRunCostUsd, type BudgetAdmission } from '../../lib/runs/budget.ts';
import type { JsonObject } from '../../lib/util/json.ts';

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
  assert.equal(getRunCostUsd({ final: resumed, events_total: 3, malformed_lines: 0 }), 0.04928);
  const twoModels: JsonObject = { total_cost_usd: 1, model_usage_since_last_result: { a: usage(0.25), b: usage(0.5) } };
  assert.equal(getRunCostUsd({ final: twoModels, events_total: 3, malformed_lines: 0 }), 0.75);
  const apiError: JsonObject = { total_cost_usd: 0, model_usage_since_last_result: {} };
  assert.equal(getRunCostUsd({ final: apiError, events_total: 2, malformed_lines: 0 }), 0);
  const noPerCall: JsonObject = { total_cost_usd: 0.2 };
  assert.equal(
    getRunCostUsd({ final: noPerCall, events_total: 1, malformed_lines: 0 }),
    0.2,
    'fallback: the cumulative total (over-charges a resume)',
  );
  const brokenPerCall: JsonObject = { total_cost_usd: 0.2, model_usage_since_last_result: { a: { inputTokens: 1 } } };
  assert.equal(getRunCostUsd({ final: brokenPerCall, events_total: 1, malformed_lines: 0 }), 0.2);
  assert.equal(getRunCostUsd({ final: { type: 'result' }, events_total: 1, malformed_lines: 0 }), null, 'no cost in the final event');
  assert.equal(getRunCostUsd({ final: null, events_total: 5, malformed_lines: 0 }), null, 'killed without a final event: unreported');
  assert.equal(getRunCostUsd({ final: null, events_total: 0, malformed_lines: 1 }), null, 'it printed something');
  assert.equal(getRunCostUsd({ final: null, events_total: 0, malformed_lines: 0 }), 0, 'it printed nothing: no request was sent');
});
