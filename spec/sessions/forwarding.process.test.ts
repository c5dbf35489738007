// Forwarding through tools/call: the exact native argv for every forwarded option (recorded by the fake),
// nothing added that was not supplied, and honest usage/cost labelling for resumed conversations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFakeRecord } from '../helpers/tool-harness.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import { at, num, objAt } from '../helpers/typed-results.ts';
import { createSessionHarness, type SessionHarness } from './helpers.ts';

const ID = '6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5';
const HEAD = ['-p', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--input-format', 'stream-json'];
const CALL_COST_USD = 0.049148; // what the fake charges per call

async function argvOf(h: SessionHarness, args: JsonObject): Promise<{ argv: string[]; result: JsonObject }> {
  const out = await h.call('claude.run', { prompt: 'p', cwd: h.dir, ...args });
  assert.equal(out.isError, false, out.text.slice(0, 400));
  // The version check writes the record first; the run itself overwrites it.
  return { argv: readFakeRecord(h.recordFile).argv, result: out.result! };
}

test('every forwarded option reaches the native argv exactly, and only when supplied', async () => {
  const h = await createSessionHarness();
  try {
    const bare = await argvOf(h, {});
    assert.deepEqual(bare.argv, [...HEAD, '--permission-mode', 'dontAsk'], 'no model, effort, budget or turn limit is imposed');
    assert.equal(bare.result['model'], 'claude-opus-5-5', 'the model the native process reported using');

    const extra = h.subdir('extra');
    const full = await argvOf(h, {
      model: 'sonnet',
      effort: 'high',
      append_system_prompt: 'Be brief.',
      max_budget_usd: 0.5,
      max_turns: 2,
      allowed_tools: ['Read', 'Bash(git status:*)'],
      disallowed_tools: ['Write'],
      add_dirs: [extra, h.dir],
      permission_mode: 'plan',
      session_id: ID,
      no_session_persistence: true,
    });
    assert.deepEqual(full.argv, [
      ...HEAD,
      '--model',
      'sonnet',
      '--effort',
      'high',
      '--append-system-prompt',
      'Be brief.',
      '--max-budget-usd',
      '0.5',
      '--max-turns',
      '2',
      '--permission-mode',
      'plan',
      '--session-id',
      ID,
      '--no-session-persistence',
      '--allowedTools',
      'Read',
      '--allowedTools',
      'Bash(git status:*)',
      '--disallowedTools',
      'Write',
      '--add-dir',
      extra,
      '--add-dir',
      h.dir,
    ]);
    assert.equal(full.result['model'], 'sonnet');
    assert.equal(full.result['session_id'], ID);

    await argvOf(h, { session_id: ID }); // now it exists, so it can be resumed
    assert.deepEqual((await argvOf(h, { resume_session_id: ID, permission_mode: 'acceptEdits' })).argv, [
      ...HEAD,
      '--permission-mode',
      'acceptEdits',
      '--resume',
      ID,
    ]);
    assert.deepEqual((await argvOf(h, { resume_session_id: ID, fork_session: true })).argv, [
      ...HEAD,
      '--permission-mode',
      'dontAsk',
      '--resume',
      ID,
      '--fork-session',
    ]);
    assert.deepEqual((await argvOf(h, { continue_previous: true })).argv, [...HEAD, '--permission-mode', 'dontAsk', '--continue']);
    assert.deepEqual((await argvOf(h, { continue_previous: true, fork_session: true })).argv, [
      ...HEAD,
      '--permission-mode',
      'dontAsk',
      '--continue',
      '--fork-session',
    ]);
    assert.deepEqual(
      (await argvOf(h, { prompt: '--model=opus' })).argv,
      [...HEAD, '--permission-mode', 'dontAsk'],
      'a prompt is never an option, nor in argv at all',
    );
    assert.equal(readFakeRecord(h.recordFile).stdin, '--model=opus', 'it is the user line the native read');
  } finally {
    await h.close();
  }
});

const callCostOf = (r: JsonObject): number => num(at(Object.values(objAt(r, 'model_usage_this_call')), 0, 'costUSD'), 'costUSD');

test('cost: total_cost_usd is the conversation total, usage and model_usage_this_call cover this call', async () => {
  const h = await createSessionHarness();
  try {
    const first = await h.full((await argvOf(h, { session_id: ID })).result['run_id']);
    assert.equal(first['total_cost_usd'], CALL_COST_USD);
    assert.equal(first['cost_scope'], 'conversation');
    assert.equal(callCostOf(first), CALL_COST_USD);

    const second = await h.full((await argvOf(h, { resume_session_id: ID })).result['run_id']);
    const third = await h.full((await argvOf(h, { resume_session_id: ID })).result['run_id']);
    assert.equal(second['cost_scope'], 'conversation');
    assert.equal(callCostOf(second), CALL_COST_USD, 'this call alone');
    assert.equal(second['total_cost_usd'], 2 * CALL_COST_USD, 'the whole conversation so far');
    assert.equal(third['total_cost_usd'], 3 * CALL_COST_USD);
    assert.ok(num(third['total_cost_usd'], 'total_cost_usd') > callCostOf(third), 'a resumed run is not billed as the whole conversation');
    assert.equal(at(third, 'usage', 'output_tokens'), 6, 'usage is this call');
    assert.equal(third['num_turns'], 1);
  } finally {
    await h.close();
  }
});

test('permission denials reported by the native result are surfaced, and the run still succeeds', async () => {
  const h = await createSessionHarness({ FAKE_CLAUDE_SCENARIO: 'permission_denied' });
  try {
    const out = await h.call('claude.run', { prompt: 'run python', cwd: h.dir });
    assert.equal(out.isError, false, out.text.slice(0, 300));
    assert.deepEqual(out.result?.['permission_denials'], [
      { tool_name: 'Bash', tool_use_id: 'toolu_fake_1', tool_input: { command: 'python3 -c "print(1)"' } },
    ]);
    const argv = readFakeRecord(h.recordFile).argv;
    assert.deepEqual(
      argv.slice(argv.indexOf('--permission-mode'), argv.indexOf('--permission-mode') + 2),
      ['--permission-mode', 'dontAsk'],
      'the MCP default mode',
    );
  } finally {
    await h.close();
  }
});
