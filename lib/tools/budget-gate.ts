/**
 * The operator's budget around the runtime: every start is admitted by the ledger first (or refused
 * with nothing spawned), runs with `--max-budget-usd` set to its grant, and is charged when it settles.
 * The last total each conversation reported is remembered, so a resume without per-call costs is charged
 * the growth of its conversation's total.
 */
import { ToolError } from '../tool-errors.ts';
import { assertNever } from '../util/assert-never.ts';
import { chargeSettledRun, createConversationTotals, type BudgetLedger, type ConversationTotals } from '../runs/budget.ts';
import type { PreparedRun } from '../runs/execute.ts';
import type { RunEntry } from '../runs/registry.ts';
import type { LiveRun, Runtime } from './runtime.ts';
import { openConversationOf } from './send.ts';

/** The native option that carries a run's cap (cli-tree.json `arg` of `--max-budget-usd`). */
export const BUDGET_OPTION_ARG = 'max_budget_usd';

/** Rebuilds a prepared run's argv with the cap the budget granted. */
export type WithCap = (prepared: PreparedRun, capUsd: number) => PreparedRun;

/** The same runtime, each start admitted by the ledger; without a ledger, the runtime itself. */
export function withBudget(runtime: Runtime, ledger: BudgetLedger | null, withCap: WithCap): Runtime {
  if (ledger === null) return runtime;
  const totals = createConversationTotals();
  // The ledger tickets of open runs that have not settled (bounded by the active runs).
  const tickets = new Map<string, number>();
  return {
    ...runtime,
    start(prepared, options) {
      const requested = prepared.request.nativeOptions[BUDGET_OPTION_ARG];
      const admission = ledger.admit(typeof requested === 'number' ? requested : null);
      switch (admission.kind) {
        case 'exhausted':
          throw new ToolError('server_budget_exhausted', 'the server budget is spent; nothing was started');
        case 'reserved':
          throw new ToolError(
            'server_budget_reserved',
            `the remaining server budget ($${admission.remainingUsd}) is reserved by running runs until they report their cost; nothing was started`,
          );
        case 'granted':
          break;
        default:
          assertNever(admission);
      }
      let entry: ReturnType<Runtime['start']>;
      try {
        entry = runtime.start(withCap(prepared, admission.capUsd), options);
      } catch (error) {
        ledger.cancel(admission.ticket);
        throw error;
      }
      const live = entry.live;
      const open = live.execution?.open ?? null;
      if (open !== null) chargeOpenRun(ledger, totals, admission.ticket, entry, tickets);
      // Settled resolves after the classification is set; an internal failure leaves it null (unreported).
      else
        void live.settled.then(() => {
          chargeSettledRun(ledger, totals, admission.ticket, prepared.request.session, live.classification);
        });
      return entry;
    },
    send(runId, message) {
      openConversationOf(runtime.registry.get(runId));
      refuseSpent(ledger, tickets.get(runId));
      return runtime.send(runId, message);
    },
  };
}

/**
 * An open run is charged turn by turn, as each turn's result reports its cost; at its end, a turn whose result
 * never came is charged what its reservation still holds (unreported: over-charged, never under-charged).
 */
function chargeOpenRun(
  ledger: BudgetLedger,
  totals: ConversationTotals,
  ticket: number,
  entry: RunEntry<LiveRun>,
  tickets: Map<string, number>,
): void {
  const live = entry.live;
  const open = live.execution?.open;
  if (!open) return;
  tickets.set(entry.run_id, ticket);
  open.onTurn((turn) => ledger.charge(ticket, turn.cost_usd));
  void live.settled.then(() => {
    tickets.delete(entry.run_id);
    // As for one-turn runs: a run that wrote no event made no API call (a refused start, a cancel while it
    // waited), so an unanswered start costs nothing; otherwise an unanswered turn is charged its grant.
    const classification = live.classification;
    const ranNothing = classification !== null && classification.events_total === 0;
    ledger.settle(ticket, classification === null || (open.unanswered() && !ranNothing) ? null : 0);
    totals.record(live.classification?.final ?? null);
  });
}

/** A send is refused before anything is written when the server budget, or this run's grant, is spent. */
function refuseSpent(ledger: BudgetLedger, ticket: number | undefined): void {
  if (ledger.snapshot().remaining_usd === 0) throw new ToolError('server_budget_exhausted', 'the server budget is spent; nothing was sent');
  const capLeft = ticket === undefined ? null : ledger.capLeftUsd(ticket);
  if (capLeft !== null && capLeft === 0)
    throw new ToolError(
      'server_budget_exhausted',
      "the run's share of the server budget (its --max-budget-usd) is spent; nothing was sent",
    );
}
