// The operator's budget over the real binary: each run's --max-budget-usd is what remains, a resumed run is
// charged its own call (not the conversation's cumulative total), the run whose cap is below one call's cost
// is stopped by the native after that call, and then a start is refused with nothing spawned and no API call.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { promptTag } from '../../fixtures/fake-anthropic/server.ts';
import { inCwd, LEAK_POLL_MS, marker, startAdapterTier } from './adapter-tier.ts';
import { pollUntilGone } from '../helpers/native-env.ts';
import type { AdapterTier } from './adapter-tier.ts';
import { firstText, num, obj, objAt, parseObj, str } from '../helpers/typed-results.ts';
import { toolErrorOf } from '../helpers/tool-harness.ts';

/** Far below two fake calls (each ~$0.00042 on 2.1.332's list prices): the third run crosses it. */
const BUDGET_USD = 0.001;

async function budgetOf(tier: AdapterTier): Promise<Record<string, unknown>> {
  const read = await tier.client.readResource({ uri: 'claude-run://capabilities' });
  return objAt(parseObj(firstText(read, 'contents'), 'the capabilities resource'), 'budget');
}

/** This call's cost as the native reported it: the sum of model_usage_this_call's costUSD. */
function callCost(result: Record<string, unknown>): number {
  return Object.values(obj(result['model_usage_this_call'])).reduce<number>((sum, usage) => sum + num(obj(usage)['costUSD'], 'costUSD'), 0);
}

const micros = (usd: number): number => Math.round(usd * 1e6);

describe('the operator budget over the real binary', () => {
  let tier: AdapterTier;
  before(async () => {
    tier = await startAdapterTier({ scenarios: { reply: { kind: 'text', text: 'ok' } }, serverArgs: [`--budget-usd=${BUDGET_USD}`] });
  });
  after(async () => {
    await tier.close();
  });

  it('grants what remains, charges a resume its own call, stops the crossing run, then refuses with nothing spawned', async (t) => {
    await inCwd(tier, async (cwd) => {
      const first = await tier.call('claude.run', { prompt: `hi ${marker('b1')} ${promptTag('reply')}`, cwd });
      assert.equal(first.isError, false, JSON.stringify(first.error));
      const full1 = await tier.full(first.result['run_id']);
      const cost1 = callCost(full1);
      assert.ok(cost1 > 0 && cost1 < BUDGET_USD / 2, `one call costs ${cost1}`);
      assert.equal(micros(num((await budgetOf(tier))['spent_usd'], 'spent')), micros(cost1));

      const second = await tier.call('claude.run', {
        prompt: `again ${marker('b2')} ${promptTag('reply')}`,
        cwd,
        resume_session_id: str(first.result['session_id'], 'session_id'),
      });
      assert.equal(second.isError, false, JSON.stringify(second.error));
      const full2 = await tier.full(second.result['run_id']);
      const cost2 = callCost(full2);
      const total2 = num(full2['total_cost_usd'], 'total_cost_usd');
      assert.ok(micros(total2) > micros(cost2), `the native total is the conversation's (${total2}), the call's ${cost2}`);
      const spent2 = micros(cost1) + micros(cost2);
      const afterTwo = await budgetOf(tier);
      assert.equal(micros(num(afterTwo['spent_usd'], 'spent')), spent2, 'charged the call, not the cumulative total');
      const remaining = (micros(BUDGET_USD) - spent2) / 1e6;
      assert.equal(afterTwo['remaining_usd'], remaining);
      t.diagnostic(`call costs ${cost1}, ${cost2}; conversation total ${total2}; remaining ${remaining}`);

      const crossing = await tier.call('claude.run', { prompt: `third ${marker('b3')} ${promptTag('reply')}`, cwd });
      assert.equal(crossing.error?.code, 'budget_exhausted', JSON.stringify(crossing.error));
      assert.match(
        crossing.error?.message ?? '',
        new RegExp(`\\$${String(remaining).replace('.', '\\.')}\\)`),
        'the native was given what remained as its cap',
      );
      const full3 = await tier.full(crossing.result['run_id']);
      assert.equal(obj(full3['final'])['subtype'], 'error_max_budget_usd');
      const spent3 = spent2 + micros(callCost(full3));
      const spent = await budgetOf(tier);
      assert.deepEqual(spent, {
        limit_usd: BUDGET_USD,
        spent_usd: spent3 / 1e6,
        reserved_usd: 0,
        remaining_usd: 0,
        available_usd: 0,
        runs_reserving: 0,
      });
      t.diagnostic(`spent ${spent3 / 1e6} of ${BUDGET_USD}: the crossing call is still made`);

      const requestsBefore = tier.fake.requests.length;
      const refused = await tier.client.callTool({ name: 'claude.run', arguments: { prompt: `fourth ${marker('b4')}`, cwd } });
      assert.equal(refused.isError, true);
      // No result: the error travels in the text (summary line, then the JSON), not in structuredContent.
      const text = firstText(refused, 'content');
      assert.equal(toolErrorOf(parseObj(text.slice(text.indexOf('\n') + 1), 'refusal')['error'])?.code, 'server_budget_exhausted', text);
      // The previous run's supervisor exits a moment after its report, and the spare is re-warmed after it: the
      // refusal's own claim is that nothing is left once those settled.
      assert.deepEqual(await pollUntilGone(() => tier.strays(), LEAK_POLL_MS), [], 'no supervisor, no native process');
      assert.equal(tier.fake.requests.length, requestsBefore, 'no API call');
    });
  });
});
