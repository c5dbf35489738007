/**
 * The operator's budget: a cap on the total reported cost of the runs one server starts. Pure.
 *
 * Amounts are kept in whole micro-dollars (integers), so sums never drift. A run is admitted with a
 * cap (its `--max-budget-usd`): what remains after what was spent and what in-flight runs reserve,
 * or less when the caller asked for less. Its cap stays reserved until it settles: a run whose cost
 * the native has not reported counts as spending its whole cap. When it settles it is charged what the
 * native reported for this invocation; a run that settles without a reported cost keeps its whole cap
 * as spent, since nothing bounds what it spent below that. A reported cost is clamped to what the ledger
 * holds exactly (MAX_LEDGER_MICROS) before it is converted, and spent saturates there: a figure of 1e302
 * dollars exhausts the budget and reads back as a number, never as Infinity.
 */
import type { JsonObject } from '../util/json.ts';
import { getNumber, getObject, getString } from '../native/events.ts';
import type { SessionIntent } from './types.ts';

/** One dollar in the ledger's unit. */
export const MICROS_PER_USD = 1_000_000;

/** The largest amount the ledger holds exactly, in micro-dollars: 2^53 − 1, about 9.007 billion dollars. */
export const MAX_LEDGER_MICROS = Number.MAX_SAFE_INTEGER;

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
  /**
   * One turn of an open run ended: charge what it reported (its whole remaining cap when null or NaN); its
   * reservation shrinks by the same amount, so the run keeps reserving only what it may still spend.
   */
  charge(ticket: number, reportedUsd: number | null): void;
  /** What a run's reservation still holds, in dollars; null when it holds none (settled or unknown). */
  capLeftUsd(ticket: number): number | null;
  /** A run settled: charge what it reported (clamped to 0..MAX_LEDGER_MICROS), or its whole cap when null or NaN. */
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
    charge(ticket, reportedUsd) {
      const cap = reservations.get(ticket);
      if (cap === undefined) return;
      const micros = chargeMicros(reportedUsd, cap);
      reservations.set(ticket, Math.max(0, cap - micros));
      spent = Math.min(MAX_LEDGER_MICROS, spent + micros);
    },
    capLeftUsd(ticket) {
      const cap = reservations.get(ticket);
      return cap === undefined ? null : toUsd(cap);
    },
    settle(ticket, reportedUsd) {
      const cap = reservations.get(ticket);
      if (cap === undefined) return;
      reservations.delete(ticket);
      spent = Math.min(MAX_LEDGER_MICROS, spent + chargeMicros(reportedUsd, cap));
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
 * - `model_usage_since_last_result` (this invocation, per model) naming at least one model: the sum of
 *   its `costUSD`.
 * - Else (missing, empty, or a model without a cost): the growth of `total_cost_usd`, which is cumulative
 *   for the conversation on the pinned version, over `priorTotalUsd` (the conversation's total before
 *   this run; null when not known, i.e. 0). A resume of a conversation whose earlier total is not known,
 *   or a total below the known one, is charged the whole total: over-charged, never under-charged.
 * - No final event but no output at all: 0, the native never sent a request (its init event precedes
 *   every one). Any other run without a final event: null.
 */
export function getRunCostUsd(facts: RunCostFacts, priorTotalUsd: number | null): number | null {
  if (facts.final === null) return facts.events_total === 0 && facts.malformed_lines === 0 ? 0 : null;
  const thisCall = sumCosts(getObject(facts.final, 'model_usage_since_last_result'));
  if (thisCall !== null) return thisCall;
  const total = getNumber(facts.final, 'total_cost_usd');
  if (total === null || total < 0) return null;
  return priorTotalUsd !== null && priorTotalUsd <= total ? total - priorTotalUsd : total;
}

/**
 * Settles a run on the ledger: what it cost (null facts: unreported, its whole cap), its growth measured
 * from the total last reported for the conversation it resumes (else its own session); then remembers the
 * total it reported, for a later resume.
 */
export function chargeSettledRun(
  ledger: BudgetLedger,
  totals: ConversationTotals,
  ticket: number,
  session: SessionIntent,
  facts: RunCostFacts | null,
): void {
  if (facts === null) {
    ledger.settle(ticket, null);
    return;
  }
  const prior = session.kind === 'resume' ? session.sessionId : getString(facts.final, 'session_id');
  ledger.settle(ticket, getRunCostUsd(facts, totals.get(prior)));
  totals.record(facts.final);
}

/** Conversations whose last reported total is remembered; past it the least recently reported is forgotten. */
export const MAX_REMEMBERED_CONVERSATIONS = 256;

/** The last `total_cost_usd` reported for each conversation, bounded: a forgotten one reads as unknown. */
export interface ConversationTotals {
  get(sessionId: string | null): number | null;
  /** Remembers the total a final event reports for its session; a final without both changes nothing. */
  record(final: JsonObject | null): void;
}

export function createConversationTotals(maxConversations: number = MAX_REMEMBERED_CONVERSATIONS): ConversationTotals {
  const totals = new Map<string, number>();
  return {
    get(sessionId) {
      return sessionId === null ? null : (totals.get(sessionId) ?? null);
    },
    record(final) {
      const sessionId = getString(final, 'session_id');
      const total = getNumber(final, 'total_cost_usd');
      if (sessionId === null || total === null) return;
      totals.delete(sessionId);
      totals.set(sessionId, total);
      for (const oldest of totals.keys()) {
        if (totals.size <= maxConversations) break;
        totals.delete(oldest);
      }
    },
  };
}

/** A model without a cost makes the sum unknown; no model at all says nothing either. */
function sumCosts(perModel: JsonObject | null): number | null {
  if (perModel === null) return null;
  const models = Object.keys(perModel);
  if (models.length === 0) return null;
  let sum = 0;
  for (const model of models) {
    const cost = getNumber(getObject(perModel, model), 'costUSD');
    if (cost === null || cost < 0) return null;
    sum += cost;
  }
  return sum;
}

/** A reported cost in whole micro-dollars, clamped to the ledger before converting (1e302 × 10^6 is Infinity). */
function chargeMicros(reportedUsd: number | null, capMicros: number): number {
  if (reportedUsd === null || Number.isNaN(reportedUsd)) return capMicros;
  const usd = Math.min(Math.max(reportedUsd, 0), MAX_LEDGER_MICROS / MICROS_PER_USD);
  return Math.min(MAX_LEDGER_MICROS, toMicros(usd));
}

function toMicros(usd: number): number {
  return Math.round(usd * MICROS_PER_USD);
}

function toUsd(micros: number): number {
  return micros / MICROS_PER_USD;
}
