// The real adapter process with the real pinned claude against the loopback fake, through the official
// SDK client: claude.run, claude.run.start/events/result, cancel, and the capabilities resource.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { lastToolResult, lastUserText, promptTag } from '../../fixtures/fake-anthropic/server.ts';
import type { Scenario } from '../../fixtures/fake-anthropic/server.ts';
import { ADAPTER_VERSION } from '../../lib/version.ts';
import { realClaudeBin } from '../helpers/native-env.ts';
import { inCwd, marker, pollTool, startAdapterTier } from './adapter-tier.ts';
import type { AdapterTier } from './adapter-tier.ts';
import { eventPageOf, firstText, isJsonObject, obj, objAt, objs, parseObj, str } from '../helpers/typed-results.ts';

const REPLY = 'Hello from the adapter tier, streamed in chunks.';
const SCENARIOS: Record<string, Scenario> = {
  reply: { kind: 'text', text: REPLY, chunkChars: 8 },
  // ~1.6 s of deltas: long enough to page events while the run is live, even on a loaded machine.
  paced: { kind: 'text', text: 'paced '.repeat(20), chunkChars: 6, deltaDelayMs: 80 },
  // 200 deltas, 100 ms apart: 20 s, far beyond the moment the test cancels it.
  slow: { kind: 'text', text: 'slow '.repeat(200), chunkChars: 5, deltaDelayMs: 100 },
};

type Json = Record<string, unknown>;

describe('adapter over the real binary: runs, events, cancel, capabilities', () => {
  let tier: AdapterTier;
  before(async () => {
    tier = await startAdapterTier({ scenarios: SCENARIOS });
  });
  after(async () => {
    await tier.close();
  });

  it('capabilities before any run: binary resolved, nothing asserted yet', async () => {
    const caps = await readCapabilities(tier);
    assert.equal(caps.native.binary, realClaudeBin());
    assert.equal(caps.native.tested_version, '2.1.332');
    assert.equal(caps.native.asserted_version, null);
  });

  it('claude.run: real stream-json ingested, progress sent, every figure exactly as the native final event reported it', async (t) => {
    await inCwd(tier, async (cwd) => {
      const prompt = `say hi ${marker('run')} ${promptTag('reply')}`;
      const started = performance.now();
      const out = await tier.call('claude.run', { prompt, cwd });
      const elapsedMs = Math.round(performance.now() - started);
      assert.equal(out.isError, false, JSON.stringify(out.error));
      // The summary is what claude.run returns; every figure below is checked on the whole object.
      const r = await tier.full(out.result['run_id']);
      for (const [field, value] of Object.entries(out.result)) assert.deepEqual(r[field], value, `summary ${field} = full ${field}`);
      assert.equal(r['state'], 'completed');
      assert.equal(r['completed'], true);
      assert.equal(r['is_error'], false);
      assert.equal(r['error'], null);
      assert.equal(r['native_error'], null);
      assert.equal(r['result'], REPLY);

      const final = obj(r['final']);
      assert.equal(final['type'], 'result');
      assert.equal(final['subtype'], 'success');
      assert.equal(final['result'], REPLY);
      assert.equal(r['session_id'], final['session_id']);
      assert.equal(r['num_turns'], final['num_turns']);
      assert.equal(r['num_turns'], 1);
      assert.equal(r['total_cost_usd'], final['total_cost_usd']);
      assert.equal(typeof r['total_cost_usd'], 'number');
      assert.equal(r['duration_ms'], final['duration_ms']);
      assert.deepEqual(r['usage'], final['usage']);
      assert.equal(obj(r['usage'])['input_tokens'], 100, 'the fake reports 100 input tokens');
      assert.deepEqual(r['model_usage_this_call'], final['model_usage_since_last_result']);
      assert.deepEqual(r['permission_denials'], []);
      assert.equal(r['resume_requested'], false);
      assert.equal(r['resumed'], false);

      const [call, ...more] = tier.callsWith(prompt);
      assert.ok(call);
      assert.equal(more.length, 0, 'one model call');
      const sentModel = obj(call.body)['model'];
      assert.equal(r['model'], sentModel, 'the model is the one the native process asked the API for');
      assert.deepEqual(Object.keys(obj(final['modelUsage'])), [sentModel]);
      assert.equal(lastUserText(call.body), prompt);
      assert.equal(call.headers['x-api-key'], tier.sandbox.apiKey);
      assert.equal(call.headers['x-claude-code-session-id'], r['session_id']);
      assert.equal(call.headers['x-client-app'], `claude-run-mcp/${ADAPTER_VERSION}`, 'the adapter identifies itself to the API');

      assert.equal(r['exit_code'], 0);
      assert.equal(r['signal'], null);
      assert.equal(r['timed_out'], false);
      assert.equal(r['cancelled'], false);
      assert.equal(r['cleanup_confirmed'], true);
      assert.equal(r['cleanup_error'], null);
      assert.equal(r['malformed_lines'], 0);
      assert.equal(r['events_dropped'], 0);

      const messages = out.progress.map((p) => p.message ?? '');
      assert.ok(messages.length >= 5, `progress: ${messages.join(' | ')}`);
      assert.ok(messages.length <= Number(r['events_total']));
      assert.match(messages[0] ?? '', new RegExp(`^system/init model=${String(sentModel)} session=${String(r['session_id'])}`));
      assert.ok(
        messages.some((m) => m.startsWith('stream_event/content_block_delta text_delta')),
        messages.join(' | '),
      );
      assert.ok(
        messages.some((m) => m.startsWith('assistant text: Hello from the adapter tier')),
        messages.join(' | '),
      );
      const counts = out.progress.map((p) => p.progress);
      assert.equal(counts[0], 1);
      assert.ok(
        counts.every((n, i) => i === 0 || n > (counts[i - 1] ?? 0)),
        `progress strictly increasing: ${counts.join(',')}`,
      );

      const page = await tier.call('claude.run.events', { run_id: r['run_id'], limit: 256 });
      const events = eventPageOf(page.result).events.map((e) => e.event);
      assert.equal(events.length, r['events_total']);
      assert.equal(events[0]?.['type'], 'system');
      assert.equal(events[0]?.['subtype'], 'init');
      assert.equal(events[0]?.['session_id'], r['session_id']);
      assert.equal(events[0]?.['claude_code_version'], '2.1.332');
      assert.equal(events[0]?.['cwd'], cwd);
      assert.equal(events[0]?.['permissionMode'], 'dontAsk');
      assert.deepEqual(events.at(-1), final, 'the retained final event is the one the result reports');
      assert.ok(existsSync(join(tier.projectDir(cwd), `${String(r['session_id'])}.jsonl`)), 'transcript saved in the sandbox HOME');
      await release(tier, r['run_id']);
      t.diagnostic(`claude.run round trip: ${elapsedMs} ms`);
    });
  });

  it('capabilities after a run: the asserted version is the pinned one', async () => {
    const caps = await readCapabilities(tier);
    assert.equal(caps.native.asserted_version, '2.1.332');
    assert.equal(caps.native.asserted_version, caps.native.tested_version);
  });

  it('claude.run.start, then events paged (limit 2) while the run is live, then claude.run.result', async () => {
    await inCwd(tier, async (cwd) => {
      const prompt = `page me ${marker('page')} ${promptTag('paced')}`;
      const started = await tier.call('claude.run.start', { prompt, cwd });
      assert.equal(started.isError, false);
      const runId = started.result['run_id'];
      assert.match(String(runId), /^run_/);
      assert.equal(started.result['completed'], false);
      assert.notEqual(started.result['state'], 'completed');

      const seqs: number[] = [];
      const events: Json[] = [];
      let cursor: string | undefined;
      let pagesWhileLive = 0;
      const lastPage = await pollTool('all events of the settled run', async () => {
        const page = await tier.call('claude.run.events', { run_id: runId, limit: 2, ...(cursor ? { cursor } : {}) });
        const got = eventPageOf(page.result).events;
        assert.ok(got.length <= 2);
        assert.equal(page.result['missed_events'], 0);
        for (const e of got) {
          seqs.push(e.seq);
          events.push(e.event);
        }
        cursor = String(page.result['next_cursor']);
        if (page.result['completed'] !== true && got.length > 0) pagesWhileLive += 1;
        return page.result['completed'] === true && page.result['has_more'] === false ? page.result : undefined;
      });
      assert.ok(pagesWhileLive >= 2, `paged ${pagesWhileLive} non-empty pages while the run was live`);
      assert.deepEqual(
        seqs,
        seqs.map((_s, i) => i + 1),
        'contiguous sequence numbers from 1, none missed',
      );
      assert.equal(seqs.length, lastPage['events_total']);

      const done = await tier.call('claude.run.result', { run_id: runId, wait_seconds: 30, detail: 'full' });
      assert.equal(done.isError, false, JSON.stringify(done.error));
      assert.equal(done.result['completed'], true);
      assert.equal(done.result['result'], 'paced '.repeat(20));
      assert.equal(done.result['cleanup_confirmed'], true);
      assert.deepEqual(events.at(-1), done.result['final']);
      assert.equal(events.filter((e) => e['type'] === 'stream_event').length > 20, true, 'the paced deltas were all ingested');
      const listed = await tier.call('claude.run.list', {});
      assert.ok(objs(listed.result['runs'], 'runs').some((run) => run['run_id'] === runId && run['completed'] === true));
      await release(tier, runId);
    });
  });

  it('claude.run.cancel mid-stream: the in-band interrupt ends the real turn, its interrupted final event is kept, the process exits by itself, cleanup confirmed', async (t) => {
    await inCwd(tier, async (cwd) => {
      const prompt = `stream slowly ${marker('cancel')} ${promptTag('slow')}`;
      const started = await tier.call('claude.run.start', { prompt, cwd });
      const runId = started.result['run_id'];
      let cursor: string | undefined;
      await pollTool('a text delta from the slow stream', async () => {
        const page = await tier.call('claude.run.events', { run_id: runId, limit: 256, ...(cursor ? { cursor } : {}) });
        cursor = String(page.result['next_cursor']);
        const got = eventPageOf(page.result).events;
        return got.some((e) => isJsonObject(e.event['event']) && e.event['event']['type'] === 'content_block_delta') ? true : undefined;
      });
      const live = (await tier.strays()).filter((p) => p.isBinary && !p.cmdline.includes('--version'));
      assert.equal(live.length, 1, 'exactly one real claude is running for the run');
      const claudePid = live[0]?.pid;

      const cancelledAt = performance.now();
      const cancel = await tier.call('claude.run.cancel', { run_id: runId });
      assert.equal(cancel.result['cancel_requested'], true);
      const done = await tier.call('claude.run.result', { run_id: runId, wait_seconds: 30, detail: 'full' });
      const settleMs = Math.round(performance.now() - cancelledAt);
      const r = done.result;
      assert.equal(done.isError, true);
      assert.equal(r['completed'], true);
      assert.equal(r['cancelled'], true);
      assert.deepEqual(done.error?.code, 'cancelled');
      assert.equal(obj(r['error'])['code'], 'cancelled');
      // The interrupt control request ends the turn in-band: the native writes its interrupted result every
      // time (on SIGINT 2.1.332 sometimes wrote none), then exits by itself on the EOF that follows.
      assert.equal(r['cancel_step'], 'interrupt', JSON.stringify(r['cleanup_error']));
      {
        assert.equal(obj(r['native_error'])['code'], 'aborted', 'the native account of the interruption is kept');
        const final = obj(r['final']);
        assert.equal(final['subtype'], 'error_during_execution');
        assert.equal(final['is_error'], true);
        assert.equal(r['session_id'], final['session_id']);
        // Measured on 2.1.332: after an interrupted turn and EOF the CLI exits 1 by itself (its last result is an
        // error), with no signal: the ladder never ran.
        assert.equal(r['exit_code'], 1, 'the native exited by itself after the interrupted turn and EOF');
        assert.equal(r['signal'], null);
        const text = String(final['result'] ?? '');
        assert.ok(!text.includes('slow '.repeat(200)), 'the stream did not run to its end');
      }
      assert.equal(r['cleanup_confirmed'], true);
      assert.equal(r['cleanup_error'], null);
      assert.equal(r['timed_out'], false);
      assert.ok(!(await tier.strays()).some((p) => p.pid === claudePid), `claude ${String(claudePid)} is gone once the result says so`);
      const [call] = tier.callsWith(prompt);
      assert.ok(call, 'the slow stream was requested');
      // The interrupted conversation stays consistent: a resume of it runs a normal turn in the same session.
      const resumed = await tier.call('claude.run', {
        prompt: `after the interrupt ${marker('resume')}`,
        cwd,
        resume_session_id: r['session_id'],
      });
      assert.equal(resumed.isError, false, JSON.stringify(resumed.error));
      assert.deepEqual([resumed.result['session_id'], resumed.result['resumed']], [r['session_id'], true]);
      await release(tier, String(resumed.result['run_id']));
      await release(tier, runId);
      t.diagnostic(`cancel to settled result: ${settleMs} ms`);
    });
  });

  it('control: a Bash tool turn under acceptEdits really runs (the marker file appears)', async () => {
    await inCwd(tier, async (cwd) => {
      const prompt = `make a marker ${marker('tool')} ${promptTag('tool_bash')}`;
      const out = await tier.call('claude.run', { prompt, cwd, permission_mode: 'acceptEdits' });
      assert.equal(out.isError, false, JSON.stringify(out.error));
      assert.deepEqual(out.result['permission_denials'], []);
      assert.equal(out.result['num_turns'], 2);
      assert.equal(existsSync(join(cwd, 'fake-tool-marker.txt')), true, 'the command ran in the run cwd');
      const calls = tier.callsWith(prompt);
      assert.equal(calls.length, 2);
      assert.equal(lastToolResult(calls[1]?.body)?.isError, false);
      await release(tier, out.result['run_id']);
    });
  });
});

/** The native part of the capabilities resource, checked. */
interface Capabilities {
  native: { binary: string | null; asserted_version: string | null; tested_version: string };
}

async function readCapabilities(tier: AdapterTier): Promise<Capabilities> {
  const read = await tier.client.readResource({ uri: 'claude-run://capabilities' });
  const native = objAt(parseObj(firstText(read, 'contents'), 'the capabilities resource'), 'native');
  const nullableString = (key: string): string | null => (native[key] === null ? null : str(native[key], `native.${key}`));
  return {
    native: {
      binary: nullableString('binary'),
      asserted_version: nullableString('asserted_version'),
      tested_version: str(native['tested_version'], 'native.tested_version'),
    },
  };
}

async function release(tier: AdapterTier, runId: unknown): Promise<void> {
  const out = await tier.call('claude.run.release', { run_id: runId });
  assert.equal(out.result['released'], true);
}
