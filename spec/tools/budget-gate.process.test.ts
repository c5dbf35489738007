// The operator's budget with the fake CLI (each call costs FAKE_CLAUDE_COST_USD): every run gets
// --max-budget-usd = what remains, a start once it is spent is refused with nothing spawned, an unreported
// run holds the rest until it settles, and the capabilities resource shows the ledger.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolHarness, readFakeRecord, recordFiles, type ToolHarness } from '../helpers/tool-harness.ts';
import { readProcTable, waitForReady } from '../helpers/proc.ts';
import { CAPABILITIES_URI } from '../../lib/tools/resources.ts';
import { arr, at, obj, parseObj, str } from '../helpers/typed-results.ts';
import type { JsonObject } from '../../lib/util/json.ts';

const CALL_COST_USD = 0.3;

async function budgetOf(h: ToolHarness): Promise<JsonObject> {
  const read = await h.request('resources/read', { uri: CAPABILITIES_URI });
  const text = str(at(obj(read['result'], 'result'), 'contents', 0, 'text'), 'capabilities text');
  return obj(parseObj(text, 'capabilities')['budget'], 'budget');
}

const ledger = (limit: number, spent: number, reserved: number, runs: number): JsonObject => {
  const remaining = Math.max(0, Math.round((limit - spent) * 1e6) / 1e6);
  return {
    limit_usd: limit,
    spent_usd: spent,
    reserved_usd: reserved,
    remaining_usd: remaining,
    available_usd: Math.max(0, Math.round((remaining - reserved) * 1e6) / 1e6),
    runs_reserving: runs,
  };
};

/** Processes whose parent is this test process: supervisors (the library keeps no spare), tsx's own helper. */
const children = (): number[] =>
  readProcTable()
    .filter((p) => p.ppid === process.pid)
    .map((p) => p.pid);

interface Rig {
  readonly h: ToolHarness;
  readonly scratch: string;
  caps(): Array<string | null>;
}

async function withBudget(budgetUsd: number | null, body: (rig: Rig) => Promise<void>): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'crm-budget-'));
  const records = join(scratch, 'records');
  mkdirSync(records);
  const h = await createToolHarness({
    env: {
      FAKE_CLAUDE_COST_USD: String(CALL_COST_USD),
      FAKE_CLAUDE_RECORD_DIR: records,
      FAKE_CLAUDE_READY_FILE: join(scratch, 'ready'),
      FAKE_CLAUDE_GATE_FILE: join(scratch, 'gate'),
      FAKE_CLAUDE_SLOW_EVENTS: '1',
      FAKE_CLAUDE_DELAY_MS: '1',
    },
    config: { budgetUsd },
  });
  // The --max-budget-usd of every native process so far, sorted (record files are named by pid).
  const caps = (): Array<string | null> => {
    let files: string[] = [];
    try {
      files = recordFiles(records);
    } catch {
      return [];
    }
    return files
      .map((f) => readFakeRecord(f).argv)
      .filter((argv) => !argv.includes('--version'))
      .map((argv) => {
        const i = argv.indexOf('--max-budget-usd');
        return i < 0 ? null : (argv[i + 1] ?? null);
      })
      .sort();
  };
  try {
    await body({ h, scratch, caps });
  } finally {
    await h.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

describe('the operator budget', () => {
  it('charges each run its reported cost, hands the next what remains, then refuses with nothing spawned', async () => {
    await withBudget(1, async ({ h, caps }) => {
      assert.deepEqual(await budgetOf(h), ledger(1, 0, 0, 0));
      for (const [i, spent, cap] of [
        [1, 0.3, '1'],
        [2, 0.6, '0.7'],
        [3, 0.9, '0.4'],
      ] as const) {
        const out = await h.call('claude.run', { prompt: `run ${i}` });
        assert.equal(out.result?.['is_error'], false, out.text);
        assert.ok(caps().includes(cap), `run ${i} got --max-budget-usd ${cap}: ${JSON.stringify(caps())}`);
        assert.deepEqual(await budgetOf(h), ledger(1, spent, 0, 0));
      }
      // $0.1 remains; the call costs $0.3: the native makes it, stops, and the whole call is charged.
      const crossing = await h.call('claude.run', { prompt: 'run 4' });
      assert.equal(crossing.error?.code, 'budget_exhausted', crossing.text);
      assert.ok(caps().includes('0.1'));
      assert.deepEqual(await budgetOf(h), ledger(1, 1.2, 0, 0));
      const before = caps().length;
      const childrenBefore = children();
      const refused = await h.call('claude.run', { prompt: 'run 5' });
      assert.equal(refused.error?.code, 'server_budget_exhausted', refused.text);
      assert.equal(refused.result, null);
      const detached = await h.call('claude.run.start', { prompt: 'run 6' });
      assert.equal(detached.error?.code, 'server_budget_exhausted');
      assert.deepEqual(
        children().filter((pid) => !childrenBefore.includes(pid)),
        [],
        'no supervisor was started',
      );
      assert.equal(caps().length, before, 'no native process was started');
      const listed = await h.call('claude.run.list', {});
      assert.equal(arr(listed.result?.['runs'], 'runs').length, 4, 'the refused starts reserved no run');
    });
  });

  it('an unreported run in flight reserves the rest: a second start is refused until it reports; a caller cap reserves only itself', async () => {
    await withBudget(1, async ({ h, scratch, caps }) => {
      const held = await h.call('claude.run.start', { prompt: '[fake:slow] held' });
      const heldId = str(held.result?.['run_id'], 'run_id');
      await waitForReady(join(scratch, 'ready'), 'streaming');
      assert.deepEqual(await budgetOf(h), ledger(1, 0, 1, 1));
      const second = await h.call('claude.run', { prompt: 'second' });
      assert.equal(second.error?.code, 'server_budget_reserved', second.text);
      assert.equal((await h.call('claude.run', { prompt: 'small', max_budget_usd: 0.01 })).error?.code, 'server_budget_reserved');
      writeFileSync(join(scratch, 'gate'), '');
      assert.equal((await h.settled(heldId)).result['is_error'], false);
      assert.deepEqual(await budgetOf(h), ledger(1, 0.3, 0, 0));
      // With a caller cap below what remains, the run reserves its own cap, and the next gets the rest.
      rmSync(join(scratch, 'gate'));
      const capped = await h.call('claude.run.start', { prompt: '[fake:slow] capped', max_budget_usd: 0.35 });
      const cappedId = str(capped.result?.['run_id'], 'run_id');
      assert.deepEqual(await budgetOf(h), ledger(1, 0.3, 0.35, 1));
      const rest = await h.call('claude.run', { prompt: 'rest' });
      assert.equal(rest.result?.['is_error'], false, rest.text);
      writeFileSync(join(scratch, 'gate'), '');
      await h.settled(cappedId);
      assert.deepEqual(caps(), ['0.35', '0.35', '1'], 'held got all, capped its own cap, rest what remained (0.35)');
      assert.deepEqual(await budgetOf(h), ledger(1, 0.9, 0, 0));
    });
  });

  it('a run that ends without a reported cost is charged its whole cap; one that never reached the native, nothing', async () => {
    await withBudget(2, async ({ h }) => {
      const unreported = await h.call('claude.run', { prompt: '[fake:no_result] gone', max_budget_usd: 0.5 });
      assert.equal(unreported.error?.code, 'missing_final_event', unreported.text);
      assert.deepEqual(await budgetOf(h), ledger(2, 0.5, 0, 0), 'its whole cap counts as spent');
      const failed = await h.call('claude.run', { prompt: 'x', cwd: '/nonexistent-budget-dir' });
      assert.equal(failed.error?.code, 'invalid_arguments');
      const apiError = await h.call('claude.run', { prompt: '[fake:api_error_500] api' });
      assert.equal(apiError.result?.['is_error'], true, apiError.text);
      assert.deepEqual(await budgetOf(h), ledger(2, 0.5, 0, 0), 'an API error reports a cost of 0');
    });
  });

  it('a claude.run task is refused the same way once the budget is spent', async () => {
    await withBudget(0.000001, async ({ h, caps }) => {
      assert.equal((await h.call('claude.run', { prompt: 'spends it' })).error?.code, 'budget_exhausted');
      const before = caps().length;
      const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'spec', version: '0' },
        'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
      };
      const answer = await h.adapter.handle({
        jsonrpc: '2.0',
        id: 'task-1',
        method: 'tools/call',
        params: { name: 'claude.run', arguments: { prompt: 'as a task' }, _meta: meta },
      });
      const result = obj(obj(answer, 'answer')['result'], 'result');
      assert.equal(result['resultType'], 'complete', 'no task was created');
      assert.equal(result['isError'], true);
      assert.match(JSON.stringify(result['content']), /server_budget_exhausted/);
      assert.equal(caps().length, before, 'no native process was started');
    });
  });

  it('without a budget: no cap is added, the capabilities budget is all null', async () => {
    await withBudget(null, async ({ h, caps }) => {
      assert.equal((await h.call('claude.run', { prompt: 'free' })).result?.['is_error'], false);
      assert.equal((await h.call('claude.run', { prompt: 'capped', max_budget_usd: 0.5 })).result?.['is_error'], false);
      assert.deepEqual(caps(), ['0.5', null]);
      assert.deepEqual(await budgetOf(h), {
        limit_usd: null,
        spent_usd: null,
        reserved_usd: null,
        remaining_usd: null,
        available_usd: null,
        runs_reserving: null,
      });
    });
  });
});
