// Through the server, with the fake CLI writing control lines on its stdout: nothing but a well-formed
// can_use_tool is ever a question, every request gets one answer (refused, denied or decided), a flood of
// unknown requests is refused only up to its bound, and the lines stay in the run's events.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_CONTROL_REFUSALS_PER_RUN, NO_ASK_HOST_DENY_MESSAGE } from '../../lib/runs/control-route.ts';
import { createToolHarness, type ToolHarness } from '../helpers/tool-harness.ts';
import { pollUntil } from '../helpers/poll.ts';
import { arr, at, obj, objs, parseObj, questionsOf } from '../helpers/typed-results.ts';
import type { JsonObject } from '../../lib/util/json.ts';

const WAIT_MS = 20_000;

/** The control lines the native wrote, as the run's events show them. */
async function controlEvents(h: ToolHarness, runId: string): Promise<JsonObject[]> {
  const page = await h.call('claude.run.events', { run_id: runId, limit: 256 });
  return objs(page.result?.['events'], 'events')
    .map((e) => obj(e['event'], 'event'))
    .filter((e) => String(e['type']).startsWith('control_'));
}

describe('control lines of the native', () => {
  it(`without ask_host: ${MAX_CONTROL_REFUSALS_PER_RUN} unknown requests refused, the rest counted, the can_use_tool denied naming permission_mode`, async () => {
    const flood = MAX_CONTROL_REFUSALS_PER_RUN + 6;
    const h = await createToolHarness({
      env: { FAKE_CLAUDE_CONTROL_FLOOD: String(flood), FAKE_CLAUDE_READY_FILE: 'ready.jsonl' },
    });
    try {
      const out = await h.call('claude.run', { prompt: '[fake:control_lines] x', cwd: h.dir });
      assert.equal(out.isError, false, out.text);
      const readyFile = join(h.dir, 'ready.jsonl');
      const report = readFileSync(readyFile, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"ready":"control"'))
        .map((line) => parseObj(line, 'ready'));
      assert.equal(report.length, 1);
      const answer = obj(report[0]?.['answer'], 'answer');
      assert.deepEqual(answer, {
        subtype: 'success',
        request_id: 'ask-1',
        response: { behavior: 'deny', message: NO_ASK_HOST_DENY_MESSAGE },
      });
      const strays = objs(report[0]?.['strays'], 'strays');
      assert.deepEqual(
        strays.map((s) => [s['request_id'], s['subtype']]),
        Array.from({ length: MAX_CONTROL_REFUSALS_PER_RUN }, (_, i) => [`unknown-${i}`, 'error']),
        'the first requests refused, in order; the rest and the malformed one after the bound only counted',
      );
      assert.equal(existsSync(join(h.dir, 'fake-tool-marker.txt')), false, 'the tool did not run');
      assert.equal(arr(out.result?.['permission_denials']).length, 1);
      assert.equal(out.result?.['permission_questions'], undefined, 'a run without ask_host has no questions');
      const events = await controlEvents(h, String(out.result?.['run_id']));
      assert.equal(events.length, flood + 4, 'every control line stays in the events as written');
    } finally {
      await h.close();
    }
  });

  it('with ask_host: only the well-formed can_use_tool is a question; unknown and malformed requests refused; the allow echoes the input', async () => {
    const h = await createToolHarness({ env: { FAKE_CLAUDE_CONTROL_FLOOD: '3', FAKE_CLAUDE_READY_FILE: 'ready.jsonl' } });
    try {
      const started = await h.call('claude.run.start', { prompt: '[fake:control_lines] x', cwd: h.dir, ask_host: true });
      assert.equal(started.isError, false, started.text);
      const runId = String(started.result?.['run_id']);
      const pending = await pollUntil(
        'the one question',
        async () => {
          const r = await h.call('claude.run.result', { run_id: runId });
          return questionsOf(r.result?.['permission_questions']).pending[0];
        },
        { timeoutMs: WAIT_MS },
      );
      const r = await h.call('claude.run.result', { run_id: runId });
      assert.equal(questionsOf(r.result?.['permission_questions']).pending.length, 1, 'one question, the malformed request is none');
      assert.deepEqual(at(r.result, 'permission_questions', 'control_lines'), {
        denied_without_ask_host: 0,
        unknown: 5,
        refused: 4,
        unmatched_responses: 1,
      });
      await h.call('claude.run.answer', { run_id: runId, question_id: String(pending['question_id']), decision: 'allow' });
      const done = await h.settled(runId);
      assert.deepEqual(done.result['permission_denials'], []);
      assert.equal(existsSync(join(h.dir, 'fake-tool-marker.txt')), true, 'the allowed tool ran');
      const report = readFileSync(join(h.dir, 'ready.jsonl'), 'utf8')
        .split('\n')
        .filter((line) => line.includes('"ready":"control"'))
        .map((line) => parseObj(line, 'ready'));
      assert.deepEqual(obj(report[0]?.['answer'], 'answer'), {
        subtype: 'success',
        request_id: 'ask-1',
        response: { behavior: 'allow', updatedInput: { command: 'touch fake-tool-marker.txt', description: 'Create a marker file' } },
      });
      assert.deepEqual(
        objs(report[0]?.['strays'], 'strays').map((s) => [s['request_id'], s['subtype']]),
        [
          ['unknown-0', 'error'],
          ['unknown-1', 'error'],
          ['unknown-2', 'error'],
          ['malformed-1', 'error'],
        ],
      );
    } finally {
      await h.close();
    }
  });
});
