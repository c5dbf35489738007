/**
 * The operator's budget around the runtime: every start is admitted by the ledger first (or refused
 * with nothing spawned), runs with `--max-budget-usd` set to its grant, and is charged when it settles.
 * The last total each conversation reported is remembered, so a resume without per-call costs is charged
 * the growth of its conversation's total.
 */
import { ToolError } from '../tool-errors.ts';
import { assertNever } from '../util/assert-never.ts';
import { chargeSettledRun, createConversationTotals, type BudgetLedger } from '../runs/budget.ts';
import type { PreparedRun } from '../runs/execute.ts';
import type { Runtime } from './runtime.ts';

/** The native option that carries a run's cap (cli-tree.json `arg` of `--max-budget-usd`). */
export const BUDGET_OPTION_ARG = 'max_budget_usd';

/** Rebuilds a prepared run's argv with the cap the budget granted. */
export type WithCap = (prepared: PreparedRun, capUsd: number) => PreparedRun;

/** The same runtime, each start admitted by the ledger; without a ledger, the runtime itself. */
export function withBudget(runtime: Runtime, ledger: BudgetLedger | null, withCap: WithCap): Runtime {
  if (ledger === null) return runtime;
  const totals = createConversationTotals();
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
      // Settled resolves after the classification is set; an internal failure leaves it null (unreported).
      void live.settled.then(() => {
        chargeSettledRun(ledger, totals, admission.ticket, prepared.request.session, live.classification);
      });
      return entry;
    },
  };
}
