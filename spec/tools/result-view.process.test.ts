// What a model reads of a run. Claude Code 2.1.332 hands its model exactly
// JSON.stringify(structuredContent) when a result has one (spec/e2e/claude-code.host.test.ts checks it), so that must be compact, hold the answer once, and say how to
// continue; the text content is a human line plus the answer; the full native result is one request away.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolHarness, readFakeRecord, recordFiles, type ToolHarness } from '../helpers/tool-harness.ts';
import { OMITTED_WHEN_EMPTY, SUMMARY_FIELDS } from '../../lib/tools/result-view.ts';

/** The summary's keys when nothing is left out for being empty (unfinished_subagents with total 0 is). */
const COMPACT_KEYS = SUMMARY_FIELDS.filter((field) => !(OMITTED_WHEN_EMPTY as readonly string[]).includes(field));
import type { JsonObject } from '../../lib/util/json.ts';
import {
  at,
  callToolResultOf,
  obj,
  objAt,
  objs,
  parseObj,
  rpcResult,
  str,
  toolResultOf,
  type CallToolResultView,
} from '../helpers/typed-results.ts';

/** The raw CallToolResult of one tools/call. */
async function rawCall(h: ToolHarness, name: string, args: JsonObject): Promise<CallToolResultView> {
  return callToolResultOf(
    rpcResult(
      await h.adapter.handle({
        jsonrpc: '2.0',
        id: Math.floor(Math.random() * 1e9),
        method: 'tools/call',
        params: { name, arguments: args },
      }),
    ),
  );
}

const occurrences = (haystack: string, needle: string): number => haystack.split(needle).length - 1;

test('a one-line answer: compact structuredContent (under 600 bytes), the answer once, text = summary line + answer', async () => {
  const h = await createToolHarness({ env: { FAKE_CLAUDE_TEXT: 'Hi' } });
  try {
    const raw = await rawCall(h, 'claude.run', { prompt: 'say hi', cwd: h.dir });
    assert.equal(raw.isError, false);
    const model = JSON.stringify(raw.structuredContent);
    assert.ok(Buffer.byteLength(model) < 600, `structuredContent is ${Buffer.byteLength(model)} bytes: ${model}`);
    const r = toolResultOf(raw);
    assert.deepEqual(Object.keys(r), COMPACT_KEYS);
    assert.equal(r['result'], 'Hi');
    assert.equal(occurrences(model, '"Hi"'), 1, 'the answer appears once');
    assert.ok(!('final' in r) && !('usage' in r) && !('stderr_tail' in r), 'no native final event, usage or stderr in the summary');
    const sessionId = String(r['session_id']);
    assert.deepEqual(r['resume'], { resume_session_id: sessionId });
    assert.equal('unfinished_subagents' in r, false, 'every background subagent finished: nothing to say');
    const text = raw.content[0]!.text;
    assert.equal(raw.content.length, 1);
    assert.match(text, /^run_\S+ succeeded in 1 turn\(s\); to continue this conversation pass resume_session_id: "[0-9a-f-]{36}"\n\nHi$/);
    assert.ok(!text.includes('{'), 'the text does not repeat the JSON');

    const full = await h.full(r['run_id']);
    for (const field of COMPACT_KEYS) assert.deepEqual(full[field], r[field], `full.${field} equals the summary's`);
    assert.deepEqual(full['unfinished_subagents'], { total: 0, killed: {}, refused: {} }, 'the full result keeps it');
    const final = objAt(full, 'final');
    assert.equal(final['type'], 'result');
    assert.equal(final['result'], 'Hi');
    assert.ok(final['subagent_stats'] !== undefined, 'the native final event is kept whole');
    assert.equal(full['exit_code'], 0);
  } finally {
    await h.close();
  }
});

test('a long answer appears once in structuredContent and once in the text', async () => {
  const answer = 'long answer line. '.repeat(1500);
  const h = await createToolHarness({ env: { FAKE_CLAUDE_TEXT: answer } });
  try {
    const raw = await rawCall(h, 'claude.run', { prompt: 'say a lot', cwd: h.dir });
    assert.equal(raw.isError, false);
    const model = JSON.stringify(raw.structuredContent);
    assert.equal(occurrences(model, answer), 1);
    assert.ok(Buffer.byteLength(model) < Buffer.byteLength(answer) + 600, 'the summary adds under 600 bytes to the answer');
    assert.equal(occurrences(raw.content[0]!.text, answer), 1);
  } finally {
    await h.close();
  }
});

test('before structuredContent (2025-03-26) the text carries the summary object itself', async () => {
  const h = await createToolHarness({ protocolVersion: '2025-03-26', env: { FAKE_CLAUDE_TEXT: 'Hi' } });
  try {
    const raw = await rawCall(h, 'claude.run', { prompt: 'say hi', cwd: h.dir });
    assert.equal(raw.structuredContent, undefined);
    const text = raw.content[0]!.text;
    const data = parseObj(text.slice(text.indexOf('\n') + 1));
    assert.deepEqual(Object.keys(data), COMPACT_KEYS);
    assert.equal(data['result'], 'Hi');
  } finally {
    await h.close();
  }
});

test('killed and refused background subagents are reported by native kind, without making the run an error', async () => {
  const stats = JSON.stringify({
    spawned: 3,
    killed: { parent: 0, user: 0, system: 2 },
    refused: { depth_limit: 0, concurrency_limit: 0, budget: 1 },
  });
  const h = await createToolHarness({ env: { FAKE_CLAUDE_SUBAGENT_STATS: stats } });
  try {
    const out = await h.call('claude.run', { prompt: 'fan out', cwd: h.dir });
    assert.equal(out.isError, false, out.text);
    assert.deepEqual(
      out.result!['unfinished_subagents'],
      { total: 3, killed: { system: 2 }, refused: { budget: 1 } },
      'kept in the summary: it carries news',
    );
    assert.match(out.text, /3 background subagent\(s\) did not finish \(unfinished_subagents\)/);
  } finally {
    await h.close();
  }
});

test('a returned session_id passed back as session_id is refused before anything is spawned, naming resume_session_id', async () => {
  const recordDir = mkdtempSync(join(tmpdir(), 'crm-session-guard-'));
  const h = await createToolHarness({ env: { FAKE_CLAUDE_RECORD_DIR: recordDir } });
  try {
    const first = await h.call('claude.run', { prompt: 'start', cwd: h.dir });
    assert.equal(first.isError, false, first.text);
    const sessionId = String(first.result!['session_id']);
    const spawnedBefore = recordFiles(recordDir).length;
    // While this adapter retains the run, and after it is released (the saved transcript still exists).
    for (const release of [false, true]) {
      if (release) await h.call('claude.run.release', { run_id: String(first.result!['run_id']) });
      const again = await h.call('claude.run', { prompt: 'continue please', cwd: h.dir, session_id: sessionId.toUpperCase() });
      assert.equal(again.isError, true);
      assert.equal(again.error!['code'], 'session_id_in_use');
      assert.equal(again.error!['path'], '/session_id');
      assert.match(String(again.error!['message']), /resume_session_id/);
      assert.ok(!String(again.error!['message']).includes(sessionId), 'the submitted value is not echoed');
      assert.equal(recordFiles(recordDir).length, spawnedBefore, 'nothing was spawned');
    }
    const resumed = await h.call('claude.run', { prompt: 'continue please', cwd: h.dir, resume_session_id: sessionId });
    assert.equal(resumed.isError, false, resumed.text);
    assert.equal(resumed.result!['session_id'], sessionId);
  } finally {
    await h.close();
    rmSync(recordDir, { recursive: true, force: true });
  }
});

test('the descriptions a model reads point from a returned session_id to resume_session_id', async () => {
  const h = await createToolHarness();
  try {
    const tools = objs(rpcResult(await h.request('tools/list'))['tools'], 'tools');
    const run = obj(
      tools.find((t) => t['name'] === 'claude.run'),
      'claude.run',
    );
    assert.match(str(run['description']), /pass that id as resume_session_id/);
    assert.match(String(at(run, 'inputSchema', 'properties', 'session_id', 'description')), /NEW .*resume_session_id/);
    assert.match(String(at(run, 'inputSchema', 'properties', 'resume_session_id', 'description')), /session_id a previous result returned/);
    const result = obj(
      tools.find((t) => t['name'] === 'claude.run.result'),
      'claude.run.result',
    );
    assert.deepEqual(at(result, 'inputSchema', 'properties', 'detail', 'enum'), ['summary', 'full']);
  } finally {
    await h.close();
  }
});

test('output_schema reaches the native --json-schema; the structured output is its own field and is sent once', async () => {
  const recordDir = mkdtempSync(join(tmpdir(), 'crm-output-schema-'));
  const structured = { answer: '42', confidence: 0.9 };
  // 2025-11-25: a schema-level refusal (not an object) is a tool error too, like the deeper ones.
  const h = await createToolHarness({
    protocolVersion: '2025-11-25',
    env: { FAKE_CLAUDE_RECORD_DIR: recordDir, FAKE_CLAUDE_STRUCTURED: JSON.stringify(structured) },
  });
  const schema = { type: 'object', properties: { answer: { type: 'string' }, confidence: { type: 'number' } }, required: ['answer'] };
  try {
    const raw = await rawCall(h, 'claude.run', { prompt: 'answer', cwd: h.dir, output_schema: schema });
    assert.equal(raw.isError, false);
    const r = toolResultOf(raw);
    assert.deepEqual(r['structured_output'], structured);
    assert.equal(r['result'], null, 'the JSON text of the same object is not sent twice');
    assert.equal(occurrences(JSON.stringify(raw.structuredContent), '"42"'), 1);
    const argv = recordFiles(recordDir)
      .map((f) => readFakeRecord(f).argv)
      .find((a) => a.includes('-p'));
    assert.ok(argv, 'the run was recorded');
    assert.equal(argv[argv.indexOf('--json-schema') + 1], JSON.stringify(schema));
    const full = await h.full(r['run_id']);
    assert.equal(full['result'], JSON.stringify(structured), 'the full object keeps the native text');

    const bad = await h.call('claude.run', {
      prompt: 'answer',
      cwd: h.dir,
      output_schema: { type: 'object', properties: { answer: { type: 'text' } } },
    });
    assert.equal(bad.isError, true);
    assert.deepEqual([bad.error!['code'], bad.error!['path']], ['invalid_arguments', '/output_schema/properties/answer/type']);
    assert.equal(bad.result, null);
    const notObject = await h.call('claude.run', { prompt: 'answer', cwd: h.dir, output_schema: [schema] });
    assert.deepEqual([notObject.error!['code'], notObject.error!['path']], ['invalid_arguments', '/output_schema']);
    assert.equal(recordFiles(recordDir).length, 2, 'the refused runs spawned nothing (one version check and one run so far)');

    const plain = await h.call('claude.run', { prompt: 'answer', cwd: h.dir });
    assert.equal(plain.result!['structured_output'], null, 'without output_schema');
  } finally {
    await h.close();
    rmSync(recordDir, { recursive: true, force: true });
  }
});
