/**
 * The operator's budget: a cap on the total reported cost of the runs one server starts. Pure.
 *
 * Amounts are kept in whole micro-dollars (integers), so sums never drift. A run is admitted with a
 * cap (its `--max-budget-usd`): what remains after what was spent and what in-flight runs reserve,
 * or less when the caller asked for less. Its cap stays reserved until it settles: a run whose cost
 * the native has not reported counts as spending its whole cap. When it settles it is charged what the
 * native reported for this invocation; a run that settles without a reported cost keeps its whole cap
 * as spent, since nothing bounds what it spent below that.
 */
import type { JsonObject } from '../util/json.ts';
import { getNumber, getObject } from '../native/events.ts';

/** One dollar in the ledger's unit. */
export const MICROS_PER_USD = 1_000_000;

export type BudgetAdmission =
  | { readonly kind: 'granted'; readonly ticket: number; readonly capUsd: number }
  /** Nothing remains: spent reached the limit. */
  | { readonly kind: 'exhausted'; readonly remainingUsd: number }
  /** Something remains, but in-flight runs reserve all of it until they settle. */
  | { readonly kind: 'reserved'; readonly remainingUsd: number; readonly reservedUsd: number };

export interface BudgetSnapshot {
  readonly limit_usd: number;
  readonly spent_usd: number;
  /** The caps of admitted runs that have not settled. */
  readonly reserved_usd: number;
  /** limit − spent, never below 0. */
  readonly remaining_usd: number;
  /** remaining − reserved, never below 0: the cap the next run would get. */
  readonly available_usd: number;
  readonly runs_reserving: number;
}

export interface BudgetLedger {
  /** Admits a run (cap = min(requested, available)) or says why not; nothing changes when refused. */
  admit(requestedCapUsd: number | null): BudgetAdmission;
  /** A granted run that never started (its start was refused after admission): its cap is freed. */
  cancel(ticket: number): void;
  /** A run settled: charge what it reported, or its whole cap when null (unreported). */
  settle(ticket: number, reportedUsd: number | null): void;
  snapshot(): BudgetSnapshot;
}

export function createBudgetLedger(limitUsd: number): BudgetLedger {
  const limit = toMicros(limitUsd);
  let spent = 0;
  const reservations = new Map<number, number>();
  let nextTicket = 1;
  const reserved = (): number => {
    let sum = 0;
    for (const cap of reservations.values()) sum += cap;
    return sum;
  };
  const remaining = (): number => Math.max(0, limit - spent);
  return {
    admit(requestedCapUsd) {
      if (remaining() === 0) return { kind: 'exhausted', remainingUsd: 0 };
      const available = Math.max(0, remaining() - reserved());
      if (available === 0) return { kind: 'reserved', remainingUsd: toUsd(remaining()), reservedUsd: toUsd(reserved()) };
      // A requested cap below one micro-dollar still gets one: the native refuses a cap of 0.
      const cap = requestedCapUsd === null ? available : Math.min(available, Math.max(1, Math.floor(requestedCapUsd * MICROS_PER_USD)));
      const ticket = nextTicket++;
      reservations.set(ticket, cap);
      return { kind: 'granted', ticket, capUsd: toUsd(cap) };
    },
    cancel(ticket) {
      reservations.delete(ticket);
    },
    settle(ticket, reportedUsd) {
      const cap = reservations.get(ticket);
      if (cap === undefined) return;
      reservations.delete(ticket);
      spent += reportedUsd === null ? cap : toMicros(reportedUsd);
    },
    snapshot() {
      const r = reserved();
      return {
        limit_usd: toUsd(limit),
        spent_usd: toUsd(spent),
        reserved_usd: toUsd(r),
        remaining_usd: toUsd(remaining()),
        available_usd: toUsd(Math.max(0, remaining() - r)),
        runs_reserving: reservations.size,
      };
    },
  };
}

/** What a settled run's final facts say it cost (this invocation, not the whole conversation). */
export interface RunCostFacts {
  /** The native final event, null when none arrived. */
  readonly final: JsonObject | null;
  /** Native events parsed from the run's stdout, and lines that were not JSON (both 0: it printed nothing). */
  readonly events_total: number;
  readonly malformed_lines: number;
}

/**
 * The cost to charge a settled run, in dollars, or null when the native did not report one.
 * - `model_usage_since_last_result` (this invocation, per model): the sum of its `costUSD`.
 * - Else `total_cost_usd`: cumulative for the conversation on the pinned version, so a resumed run is
 *   over-charged its earlier history rather than under-charged.
 * - No final event but no output at all: 0, the native never sent a request (its init event precedes
 *   every one). Any other run without a final event: null.
 */
export function getRunCostUsd(facts: RunCostFacts): number | null {
  if (facts.final === null) return facts.events_total === 0 && facts.malformed_lines === 0 ? 0 : null;
  const thisCall = sumCosts(getObject(facts.final, 'model_usage_since_last_result'));
  if (thisCall !== null) return thisCall;
  const total = getNumber(facts.final, 'total_cost_usd');
  return total !== null && total >= 0 ? total : null;
}

function sumCosts(perModel: JsonObject | null): number | null {
  if (perModel === null) return null;
  let sum = 0;
  for (const model of Object.keys(perModel)) {
    const cost = getNumber(getObject(perModel, model), 'costUSD');
    if (cost === null || cost < 0) return null;
    sum += cost;
  }
  return sum;
}

function toMicros(usd: number): number {
  return Math.round(usd * MICROS_PER_USD);
}

function toUsd(micros: number): number {
  return micros / MICROS_PER_USD;
}
