// The adapter as Claude Code hosts it, over the real binary: started with a Claude Code session's own
// variables in its environment (they must not reach the nested claude), answering with a compact
// summary (what the host's model reads), typed output through --json-schema, and the session guard.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promptTag } from '../../fixtures/fake-anthropic/server.ts';
import type { Scenario } from '../../fixtures/fake-anthropic/server.ts';
import { HOST_SESSION_ENV } from '../../lib/native/native-env.ts';
import { OMITTED_WHEN_EMPTY, SUMMARY_FIELDS } from '../../lib/tools/result-view.ts';
import { MAX_ACTIVE_RUNS } from '../../lib/runs/registry.ts';
import { readProcStat } from '../../lib/process/proc-table.ts';
import { isLive } from '../../lib/process/proc-stat.ts';
import { pollUntilGone } from '../helpers/native-env.ts';
import { pollUntil } from '../helpers/poll.ts';
import { at, firstText, objs, toolBody, toolResultOf } from '../helpers/typed-results.ts';
import { toolErrorOf } from '../helpers/tool-harness.ts';
import { inCwd, marker, pollTool, startAdapterTier } from './adapter-tier.ts';
import type { AdapterTier } from './adapter-tier.ts';

const HOST_ID = randomUUID();
/** What Claude Code 2.1.332 hands an MCP server it starts (as captured from its MCP server processes), plus its child-session markers. */
const HOST_SESSION: Record<string, string> = {
  CLAUDECODE: '1',
  CLAUDE_CODE_ENTRYPOINT: 'cli',
  CLAUDE_CODE_SESSION_ID: HOST_ID,
  CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS: HOST_ID,
  CLAUDE_CODE_MESSAGING_SOCKET: '/nonexistent/host-messaging.sock',
  CLAUDE_CODE_MESSAGING_TOKEN: 'host-messaging-credential',
  CLAUDE_CODE_CHILD_NOTES_DIR: '/nonexistent/host-notes',
  CLAUDE_CODE_CHILD_SESSION: '1',
  CLAUDE_CODE_SESSION_ATTENDED: '1',
  CLAUDE_PROJECT_DIR: '/nonexistent/host-project',
  CLAUDE_PID: '1',
  CLAUDE_EFFORT: 'max',
  AI_AGENT: 'claude-code/2.1.332/agent',
};
const SCHEMA = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
const SCENARIOS: Record<string, Scenario> = {
  hi: { kind: 'text', text: 'Hi' },
  paced: { kind: 'text', text: 'paced '.repeat(20), chunkChars: 6, deltaDelayMs: 80 },
  structured: { kind: 'tool_use', tool: 'StructuredOutput', input: { answer: '42' }, followUpText: 'done' },
};

describe('adapter over the real binary, hosted like Claude Code hosts it', () => {
  let tier: AdapterTier;
  before(async () => {
    for (const name of Object.keys(HOST_SESSION)) assert.ok(HOST_SESSION_ENV.includes(name), `${name} is a host-session variable`);
    tier = await startAdapterTier({ scenarios: SCENARIOS, extraEnv: HOST_SESSION });
  });
  after(async () => {
    await tier.close();
  });

  it('the nested claude runs normally without any host-session variable, in its own project', async () => {
    await inCwd(tier, async (cwd) => {
      const started = await tier.call('claude.run.start', { prompt: `pace ${marker('env')} ${promptTag('paced')}`, cwd });
      const runId = started.result['run_id'];
      const claude = await pollTool('the real claude of the run', async () =>
        (await tier.strays()).find((p) => p.isBinary && !p.cmdline.includes('--version')),
      );
      const environ = readFileSync(`/proc/${claude.pid}/environ`, 'utf8')
        .split('\0')
        .map((entry) => entry.slice(0, entry.indexOf('=')));
      for (const name of HOST_SESSION_ENV) assert.ok(!environ.includes(name), `${name} reached the nested claude`);
      assert.ok(environ.includes('CLAUDE_RUN_MCP_ACTIVE'));
      const done = await tier.call('claude.run.result', { run_id: runId, wait_seconds: 30 });
      assert.equal(done.isError, false, JSON.stringify(done.error));
      const sessionId = String(done.result['session_id']);
      assert.ok(existsSync(join(tier.projectDir(cwd), `${sessionId}.jsonl`)), "the transcript lives under the run cwd's project");
      await tier.call('claude.run.release', { run_id: runId });
    });
  });

  it("a one-line answer: the structuredContent the host's model reads is under 600 bytes; the full object has the final event", async (t) => {
    await inCwd(tier, async (cwd) => {
      const answer = await tier.client.callTool({
        name: 'claude.run',
        arguments: { prompt: `say hi ${marker('hi')} ${promptTag('hi')}`, cwd },
      });
      assert.equal(answer.isError, false);
      const model = JSON.stringify(answer.structuredContent);
      const r = toolResultOf(answer);
      assert.deepEqual(
        Object.keys(r),
        SUMMARY_FIELDS.filter((field) => !(OMITTED_WHEN_EMPTY as readonly string[]).includes(field)),
      );
      assert.equal(r['result'], 'Hi');
      assert.deepEqual(r['resume'], { resume_session_id: r['session_id'] });
      assert.equal('unfinished_subagents' in r, false, 'nothing killed or refused: left out of the summary');
      assert.ok(Buffer.byteLength(model) < 600, `${Buffer.byteLength(model)} bytes: ${model}`);
      const text = firstText(answer);
      assert.match(text, /succeeded in 1 turn\(s\); to continue this conversation pass resume_session_id: "[0-9a-f-]{36}"\n\nHi$/);
      const full = await tier.full(r['run_id']);
      const fullBytes = Buffer.byteLength(JSON.stringify({ result: full }));
      assert.equal(at(full, 'final', 'result'), 'Hi');
      assert.ok(at(full, 'final', 'subagent_stats') !== undefined);
      assert.deepEqual(
        full['unfinished_subagents'],
        { total: 0, killed: {}, refused: {} },
        'the real subagent_stats, kept in the full object',
      );
      t.diagnostic(
        `one-line answer: summary structuredContent ${Buffer.byteLength(model)} bytes, full ${fullBytes} bytes, text ${Buffer.byteLength(text)} bytes`,
      );
      await tier.call('claude.run.release', { run_id: r['run_id'] });
    });
  });

  it('output_schema: the real --json-schema run returns the validated object as structured_output', async () => {
    await inCwd(tier, async (cwd) => {
      const prompt = `answer typed ${marker('typed')} ${promptTag('structured')}`;
      const out = await tier.call('claude.run', { prompt, cwd, output_schema: SCHEMA });
      assert.equal(out.isError, false, JSON.stringify(out.error));
      assert.deepEqual(out.result['structured_output'], { answer: '42' });
      assert.equal(out.result['result'], null, 'sent once, as structured_output');
      const full = await tier.full(out.result['run_id']);
      assert.deepEqual(at(full, 'final', 'structured_output'), { answer: '42' });
      assert.equal(full['result'], '{"answer":"42"}', "the native text is the object's JSON");
      const [call] = tier.callsWith(prompt);
      const tools = objs(at(call?.body, 'tools') ?? [], "the request's tools");
      assert.deepEqual(
        tools.find((tool) => tool['name'] === 'StructuredOutput')?.['input_schema'],
        SCHEMA,
        'the schema reached the model as the StructuredOutput tool',
      );
      await tier.call('claude.run.release', { run_id: out.result['run_id'] });
    });
  });

  it('an invalid output_schema is refused at its inner path before anything reaches the API', async () => {
    await inCwd(tier, async (cwd) => {
      const prompt = `never sent ${marker('badschema')}`;
      const answer = await tier.client.callTool({
        name: 'claude.run',
        arguments: { prompt, cwd, output_schema: { type: 'object', properties: { answer: { type: 'text' } } } },
      });
      assert.equal(answer.isError, true);
      const error = toolErrorOf(toolBody(answer)['error']);
      assert.deepEqual([error?.code, error?.path], ['invalid_arguments', '/output_schema/properties/answer/type']);
      assert.deepEqual(tier.callsWith(prompt), []);
    });
  });
});

describe('adapter over the real binary: the host ends it with SIGINT while four runs stream', () => {
  let tier: AdapterTier;
  before(async () => {
    tier = await startAdapterTier({ scenarios: { slow: { kind: 'text', text: 'slow '.repeat(200), chunkChars: 5, deltaDelayMs: 100 } } });
  });
  after(async () => {
    await tier.close();
  }); // asserts that nothing the tier started survived

  it('exits at once; every real claude and supervisor still ends', async (t) => {
    const cwd = await tier.newCwd();
    for (let i = 0; i < MAX_ACTIVE_RUNS; i++) {
      const started = await tier.call('claude.run.start', { prompt: `stream ${i} ${marker('sigint')} ${promptTag('slow')}`, cwd });
      assert.equal(started.isError, false, JSON.stringify(started.error));
    }
    const streaming = await pollTool('four real claude processes streaming', async () => {
      const binaries = (await tier.strays()).filter((p) => p.isBinary && !p.cmdline.includes('--version'));
      const requests = tier.fake.requests.filter((r) => r.path === '/v1/messages' && JSON.stringify(r.body).includes('sigint-')).length;
      return binaries.length === MAX_ACTIVE_RUNS && requests >= MAX_ACTIVE_RUNS ? binaries : undefined;
    });
    const signalled = performance.now();
    process.kill(tier.serverPid, 'SIGINT');
    // Polled every 2 ms (pollTool's 50 ms would blur the figure).
    await pollUntil(
      'the adapter to exit after SIGINT',
      () => {
        const stat = readProcStat(tier.serverPid);
        return stat === null || !isLive(stat);
      },
      { timeoutMs: 10_000, intervalMs: 2 },
    );
    const exitMs = performance.now() - signalled;
    t.diagnostic(`SIGINT to adapter exit with ${MAX_ACTIVE_RUNS} real runs streaming: ${exitMs.toFixed(1)} ms`);
    // A hang guard, not a speed promise (a busy machine stretches any figure): the proof that the server does
    // not wait for its runs is spec/e2e/signal-shutdown.process.test.ts, where the natives ignore signals.
    assert.ok(exitMs < 4000, `took ${exitMs} ms`);
    const left = await pollUntilGone(() => tier.strays(), 15_000);
    assert.deepEqual(
      left.map((p) => `${p.pid} ${p.cmdline.join(' ').slice(0, 120)}`),
      [],
      'every run process ended after the adapter',
    );
    assert.ok(streaming.every((p) => readProcStat(p.pid) === null || !isLive(readProcStat(p.pid)!)));
  });
});
