// claude.run as an MCP task (2026-07-28 tasks extension) over the real tool providers, real supervisors and
// the fake native CLI, replaying what Claude Code 2.1.332 (interactive) was captured doing on the wire:
// an immediate first tasks/get, polls at pollIntervalMs, two identical
// tasks/cancel at the same millisecond, shutdown with a task in flight.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAdapter, type Adapter } from '../../lib/adapter.ts';
import { createProviders, type Providers } from '../../lib/tools/providers.ts';
import { MAX_STATUS_MESSAGE_BYTES, TASK_POLL_INTERVAL_MS, workingStatusMessage } from '../../lib/tools/tasks.ts';
import { MAX_ACTIVE_RUNS, MAX_RETAINED_RUNS } from '../../lib/runs/registry.ts';
import { FAKE_CLAUDE } from '../helpers/tool-harness.ts';
import { pollUntil } from '../helpers/poll.ts';
import { specSupervision } from '../helpers/bundle.ts';
import {
  at,
  firstText,
  jsonLines,
  num,
  obj,
  objAt,
  objs,
  parseObj,
  questionsOf,
  rpcError,
  rpcResult,
  toolBody,
  toolResultOf,
} from '../helpers/typed-results.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import { MAX_TASK_ID_CHARS } from '../../lib/handlers/tasks.ts';

type Json = Record<string, unknown>;
const TASKS = 'io.modelcontextprotocol/tasks';
const CAPS = { roots: { listChanged: true }, elicitation: { form: {}, url: {} } };
/** Claude Code's interactive _meta ("M" in the capture); `tasks: false` is print mode / CLAUDE_CODE_DISABLE_MCP_TASKS=1. */
const meta = (tasks: boolean): Json => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'claude-code', version: '2.1.332' },
  'io.modelcontextprotocol/clientCapabilities': tasks ? { ...CAPS, extensions: { [TASKS]: {} } } : CAPS,
});
/** A deadline for waits on the run itself; the fake runs take well under a second. */
const WAIT_MS = 20_000;
/** How often the spec polls tasks/get (the spec's rate, capped to keep the test short). */
const CLIENT_POLL_MS = 100;

interface Rig {
  readonly adapter: Adapter;
  readonly providers: Providers;
  readonly dir: string;
  readonly readyFile: string;
  request(method: string, params: Json): Promise<Json>;
  /** A modern tools/call of claude.run; `tasks` declares the extension on this request. */
  run(prompt: string, tasks: boolean, extraMeta?: Json): Promise<Json>;
  get(taskId: string): Promise<Json>;
  /** Resolves once the fake CLI wrote `what` to its ready file `count` times (an event, not a sleep). */
  readyCount(what: string): number;
  waitReady(what: string, count?: number): Promise<void>;
  close(): Promise<void>;
}

let nextId = 0;

function createRig(): Rig {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-tasks-')));
  const readyFile = join(dir, 'ready.jsonl');
  const providers = createProviders({
    claudeBin: FAKE_CLAUDE,
    maxTimeoutSeconds: 1800,
    underscoreNames: false,
    promptViaStdin: false,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: dir,
      FAKE_CLAUDE_READY_FILE: readyFile,
      FAKE_CLAUDE_SLOW_EVENTS: '400',
      FAKE_CLAUDE_DELAY_MS: '50',
    },
    cwd: dir,
    supervision: { interruptGraceMs: 1000, termGraceMs: 500, killGraceMs: 500, trackIntervalMs: 50, ...specSupervision() },
  });
  const adapter = createAdapter({
    toolProvider: providers.toolProvider,
    resourceProvider: providers.resourceProvider,
    onClose: providers.close,
  });
  const request = async (method: string, params: Json): Promise<Json> =>
    obj(await adapter.handle({ jsonrpc: '2.0', id: nextId++, method, params }), `${method} response`);
  const readyCount = (what: string): number =>
    existsSync(readyFile)
      ? readFileSync(readyFile, 'utf8')
          .split('\n')
          .filter((line) => line.includes(`"ready":"${what}"`)).length
      : 0;
  return {
    adapter,
    providers,
    dir,
    readyFile,
    request,
    readyCount,
    run: (prompt, tasks, extraMeta = {}) =>
      request('tools/call', {
        name: 'claude.run',
        arguments: { prompt, cwd: dir },
        _meta: { ...meta(tasks), 'progressToken': 1, 'claudecode/toolUseId': 'toolu_x', ...extraMeta },
      }),
    get: (taskId) => request('tasks/get', { taskId, _meta: meta(true) }),
    async waitReady(what, count = 1) {
      await pollUntil(`the fake CLI's readiness line ${what} x${count}`, () => readyCount(what) >= count, {
        timeoutMs: WAIT_MS,
        intervalMs: 10,
      });
    },
    async close() {
      await adapter.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const resultOf = rpcResult;

/** Polls like the client (at once, then at a steady rate) until the task leaves "working". */
async function pollUntilTerminal(rig: Rig, taskId: string): Promise<{ final: Json }> {
  const final = await pollUntil(
    `task ${taskId} to leave "working"`,
    async () => {
      const task = resultOf(await rig.get(taskId));
      return task['status'] !== 'working' && task;
    },
    { timeoutMs: WAIT_MS, intervalMs: CLIENT_POLL_MS },
  );
  return { final };
}

describe('claude.run as a task', () => {
  let rig: Rig;
  before(() => {
    rig = createRig();
  });
  after(async () => {
    await rig.close();
  });

  it('returns a task at once; the immediate first poll finds it; completed inlines exactly the result claude.run returns', async () => {
    const created = resultOf(await rig.run('say hi', true));
    assert.equal(created['resultType'], 'task');
    const taskId = String(created['taskId']);
    assert.match(taskId, /^run_[\x21-\x7e]+$/, 'the task id is the run_id');
    assert.equal(created['status'], 'working');
    assert.equal(created['ttlMs'], null, 'retention is by count, not time');
    assert.equal(created['pollIntervalMs'], TASK_POLL_INTERVAL_MS);
    assert.match(String(created['createdAt']), /^\d{4}-\d{2}-\d{2}T.*Z$/);
    assert.match(String(created['lastUpdatedAt']), /^\d{4}-\d{2}-\d{2}T.*Z$/);
    assert.equal(typeof created['statusMessage'], 'string');
    assert.ok('io.modelcontextprotocol/serverInfo' in objAt(created, '_meta'));
    assert.equal('content' in created, false, 'a task result carries no tool content');

    // Claude Code polls within ~20 ms: the task must already resolve (same tick here).
    const first = resultOf(await rig.get(taskId));
    assert.equal(first['resultType'], 'complete');
    assert.equal(first['taskId'], taskId);
    assert.ok(['working', 'completed'].includes(String(first['status'])));

    const { final } = await pollUntilTerminal(rig, taskId);
    assert.equal(final['status'], 'completed', JSON.stringify(final));
    const inline = objAt(final, 'result');
    assert.equal(inline['isError'], false);
    const structured = toolResultOf(inline);
    assert.equal(structured['run_id'], taskId);
    assert.equal(structured['result'], 'Hi! I am a fake Claude.');
    assert.equal(structured['cleanup_confirmed'], true);
    const full = resultOf(
      await rig.request('tools/call', { name: 'claude.run.result', arguments: { run_id: taskId, detail: 'full' }, _meta: meta(false) }),
    );
    assert.equal(final['lastUpdatedAt'], toolResultOf(full)['settled_at']);
    assert.match(String(final['statusMessage']), /succeeded/);

    // The very object the tool path builds for this run (claude.run.result reads it the same way claude.run returns it).
    const viaTool = resultOf(
      await rig.request('tools/call', { name: 'claude.run.result', arguments: { run_id: taskId }, _meta: meta(false) }),
    );
    assert.deepEqual(inline, { content: viaTool['content'], structuredContent: viaTool['structuredContent'], isError: viaTool['isError'] });
    // Polling again answers the same thing: the result stays until the run is released or evicted.
    assert.deepEqual(resultOf(await rig.get(taskId))['result'], inline);
  });

  it('without the declaration the same call is synchronous and returns the same shape of result', async () => {
    const sync = resultOf(await rig.run('say hi', false));
    assert.equal(sync['resultType'], 'complete');
    assert.equal(sync['isError'], false);
    assert.equal(toolResultOf(sync)['result'], 'Hi! I am a fake Claude.');
    assert.equal(toolResultOf(sync)['completed'], true);
  });

  it('a task is a run: listed, in the work snapshot with its work-invocation, released by the same rules; then tasks/get is -32602', async () => {
    const own = createRig(); // a fresh process: the work snapshot needs every retained run host-bound
    try {
      const invocation = '0b9f6c1e-6f53-4e0e-9b0a-6d2f3c1a9e77';
      const created = resultOf(await own.run('[fake:slow] a while', true, { 'io.github.computer-mcp/work-invocation': invocation }));
      const taskId = String(created['taskId']);
      const listed = resultOf(await own.request('tools/call', { name: 'claude.run.list', arguments: {}, _meta: meta(false) }));
      const runs = objs(toolResultOf(listed)['runs'], 'runs');
      const mine = runs.find((r) => r['run_id'] === taskId);
      assert.ok(mine, 'the task is in claude.run.list');
      assert.equal(mine['acquired_by'], invocation);
      const read = resultOf(await own.request('resources/read', { uri: 'computer-mcp://runtime/work/v1', _meta: meta(true) }));
      const owners = objs(parseObj(firstText(read, 'contents'))['owners'], 'owners');
      assert.deepEqual(
        owners.map((o) => [o['kind'], o['run_id'], o['acquired_by']]),
        [['claude.run', taskId, invocation]],
      );
      // Not releasable while it works (same rule as any run); released once cancelled and cleaned up.
      const early = resultOf(
        await own.request('tools/call', { name: 'claude.run.release', arguments: { run_id: taskId }, _meta: meta(false) }),
      );
      assert.equal(early['isError'], true);
      assert.match(firstText(early), /run_active/);
      await own.request('tasks/cancel', { taskId, _meta: meta(true) });
      assert.equal((await pollUntilTerminal(own, taskId)).final['status'], 'cancelled');
      const released = resultOf(
        await own.request('tools/call', { name: 'claude.run.release', arguments: { run_id: taskId }, _meta: meta(false) }),
      );
      assert.equal(released['isError'], false);
      const gone = rpcError(await own.get(taskId));
      assert.equal(gone.code, -32602);
      assert.deepEqual(gone.data, { path: '/taskId' });
      assert.equal(rpcError(await own.request('tasks/cancel', { taskId, _meta: meta(true) })).code, -32602);
    } finally {
      await own.close();
    }
  });

  it('working: statusMessage follows the native progress, bounded; a run_id from claude.run.start is not a task', async () => {
    const seen = rig.readyCount('streaming');
    const created = resultOf(await rig.run('[fake:slow] stream slowly', true));
    const taskId = String(created['taskId']);
    await rig.waitReady('streaming', seen + 1);
    let last: Json = {};
    const task = await pollUntil(
      () => `statusMessage to show a stream event (last: ${String(last['statusMessage'])})`,
      async () => {
        last = resultOf(await rig.get(taskId));
        return String(last['statusMessage']).startsWith('running: stream_event') && last;
      },
      { timeoutMs: WAIT_MS },
    );
    assert.equal(task['status'], 'working');
    assert.ok(Buffer.byteLength(String(task['statusMessage'])) <= MAX_STATUS_MESSAGE_BYTES);
    assert.ok(String(task['lastUpdatedAt']) >= String(task['createdAt']));

    const started = resultOf(
      await rig.request('tools/call', { name: 'claude.run.start', arguments: { prompt: 'say hi', cwd: rig.dir }, _meta: meta(true) }),
    );
    assert.equal(started['resultType'], 'complete', 'claude.run.start already returns at once: never a task');
    const runId = String(toolResultOf(started)['run_id']);
    assert.equal(rpcError(await rig.get(runId)).code, -32602, 'only task-created runs answer tasks/get');

    // Two identical cancels at the same millisecond (Claude Code's task panel): both acknowledged.
    const [a, b] = await Promise.all([
      rig.request('tasks/cancel', { taskId, _meta: meta(true) }),
      rig.request('tasks/cancel', { taskId, _meta: meta(true) }),
    ]);
    for (const ack of [a, b]) {
      const result = resultOf(ack);
      assert.equal(result['resultType'], 'complete');
      assert.deepEqual(Object.keys(result).sort(), ['_meta', 'resultType']);
    }
    const { final } = await pollUntilTerminal(rig, taskId);
    assert.equal(final['status'], 'cancelled');
    assert.equal('result' in final, false, 'a cancelled task carries no result');
    // A cancel after the end is acknowledged too (idempotent), and changes nothing.
    assert.equal(resultOf(await rig.request('tasks/cancel', { taskId, _meta: meta(true) }))['resultType'], 'complete');
    const body = resultOf(
      await rig.request('tools/call', { name: 'claude.run.result', arguments: { run_id: taskId, detail: 'full' }, _meta: meta(false) }),
    );
    const run = toolResultOf(body);
    assert.equal(run['cancelled'], true);
    assert.equal(run['cleanup_confirmed'], true, 'the cancelled task was cleaned up like any run');
    await rig.request('tools/call', { name: 'claude.run.result', arguments: { run_id: runId, wait_seconds: 20 }, _meta: meta(false) });
  });

  it('tasks/update is acknowledged (no input is ever outstanding); bad params are -32602 without echo', async () => {
    const created = resultOf(await rig.run('say hi', true));
    const taskId = String(created['taskId']);
    const ack = resultOf(
      await rig.request('tasks/update', {
        taskId,
        inputResponses: { 'confirm-1': { action: 'accept', content: { proceed: true } } },
        _meta: meta(true),
      }),
    );
    assert.equal(ack['resultType'], 'complete');
    const bad = rpcError(await rig.request('tasks/update', { taskId, inputResponses: 'SECRET', _meta: meta(true) }));
    assert.equal(bad.code, -32602);
    assert.deepEqual(bad.data, { path: '/inputResponses' });
    assert.doesNotMatch(JSON.stringify(bad), /SECRET/);
    const tooLong = rpcError(await rig.request('tasks/get', { taskId: 'x'.repeat(MAX_TASK_ID_CHARS + 1), _meta: meta(true) }));
    assert.equal(tooLong.code, -32602);
    assert.deepEqual(tooLong.data, { path: '/taskId' });
    assert.match(tooLong.message, /1 to 1024 characters/);
    const atBound = rpcError(await rig.request('tasks/get', { taskId: 'x'.repeat(MAX_TASK_ID_CHARS), _meta: meta(true) }));
    assert.equal(atBound.code, -32602);
    assert.match(atBound.message, /task not found/, 'an id at the bound is looked up (and unknown)');
    await pollUntilTerminal(rig, taskId);
  });

  it(`the run bounds hold for tasks: a fifth concurrent task is refused synchronously (active_limit_reached), starting nothing`, async () => {
    const ids: string[] = [];
    for (let i = 0; i < MAX_ACTIVE_RUNS; i++) ids.push(String(resultOf(await rig.run('[fake:slow] hold', true))['taskId']));
    const refused = resultOf(await rig.run('[fake:slow] one too many', true));
    assert.equal(refused['resultType'], 'complete', 'not a task');
    assert.equal(refused['isError'], true);
    assert.match(firstText(refused), /active_limit_reached/);
    await Promise.all(ids.map((taskId) => rig.request('tasks/cancel', { taskId, _meta: meta(true) })));
    for (const taskId of ids) assert.equal((await pollUntilTerminal(rig, taskId)).final['status'], 'cancelled');
  });
});

describe('ask_host: a task and a synchronous claude.run report the same result', () => {
  /** The fields that differ between two runs of the same scenario (ids and times), replaced by their kind. */
  const VOLATILE = new Set(['run_id', 'session_id', 'resume_session_id', 'question_id', 'asked_at', 'decided_at', 'expires_at']);
  const shape = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(shape);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, VOLATILE.has(k) && typeof v === 'string' ? `<${k}>` : shape(v)]));
  };
  const allowForm = { action: 'accept', content: { decision: 'allow' } };

  it('the completed task inlines the permission questions that claude.run returns for the same run', async () => {
    const rig = createRig();
    try {
      const args = { prompt: '[fake:ask_permission] touch a marker', cwd: rig.dir, ask_host: true };
      // The task path (2026-07-28, the tasks extension declared): input_required, answered by tasks/update.
      const created = resultOf(await rig.request('tools/call', { name: 'claude.run', arguments: args, _meta: meta(true) }));
      const taskId = String(created['taskId']);
      const asking = await pollUntil(
        'the task to ask',
        async () => {
          const task = resultOf(await rig.get(taskId));
          return task['status'] === 'input_required' && task;
        },
        { timeoutMs: WAIT_MS, intervalMs: CLIENT_POLL_MS },
      );
      const [key] = Object.keys(objAt(asking, 'inputRequests'));
      await rig.request('tasks/update', { taskId, inputResponses: { [key!]: allowForm }, _meta: meta(true) });
      const { final } = await pollUntilTerminal(rig, taskId);
      assert.equal(final['status'], 'completed', JSON.stringify(final));
      const viaTask = toolResultOf(objAt(final, 'result'));
      const decided = questionsOf(viaTask['permission_questions']).decided;
      assert.deepEqual(
        decided.map((d) => [d['tool_name'], d['behavior'], d['decided_by']]),
        [['Bash', 'allow', 'host']],
        'the model learns that the person allowed the tool use',
      );
      const read = resultOf(
        await rig.request('tools/call', { name: 'claude.run.result', arguments: { run_id: taskId }, _meta: meta(false) }),
      );
      assert.deepEqual(objAt(final, 'result'), {
        content: read['content'],
        structuredContent: read['structuredContent'],
        isError: read['isError'],
      });

      // The synchronous path (legacy era: the question goes out as elicitation/create) for the same scenario.
      const asked: JsonObject[] = [];
      const sync = await rig.providers.toolProvider.call(
        'claude.run',
        { ...args, prompt: '[fake:ask_permission] touch a marker again' },
        {
          signal: new AbortController().signal,
          progress: undefined,
          workInvocation: null,
          protocolVersion: '2025-11-25',
          elicit: async (params) => {
            asked.push(params);
            return allowForm;
          },
        },
      );
      assert.equal(sync.ok, true, JSON.stringify(sync));
      assert.equal(asked.length, 1, 'the synchronous run asked once');
      assert.deepEqual(shape(viaTask), shape(sync.result), 'one object, whichever path ran it');
      assert.equal(existsSync(join(rig.dir, 'fake-tool-marker.txt')), true, 'the allowed tool ran');
    } finally {
      await rig.close();
    }
  });
});

describe('ask_host: a form left open past its bound (Claude Code does not poll while a form is open)', () => {
  it('the deny stands, the run completes, a late Allow is refused (-32602, permission_question_not_pending) and the result records it', async () => {
    const rig = createRig();
    try {
      const args = { prompt: '[fake:ask_permission] touch a marker', cwd: rig.dir, ask_host: true, ask_host_timeout_seconds: 1 };
      const created = resultOf(await rig.request('tools/call', { name: 'claude.run', arguments: args, _meta: meta(true) }));
      const taskId = String(created['taskId']);
      const asking = await pollUntil(
        'the task to ask',
        async () => {
          const task = resultOf(await rig.get(taskId));
          return task['status'] === 'input_required' && task;
        },
        { timeoutMs: WAIT_MS, intervalMs: CLIENT_POLL_MS },
      );
      const [key] = Object.keys(objAt(asking, 'inputRequests'));
      assert.match(String(at(asking, 'inputRequests', key!, 'params', 'message')), /Answer within 1 second; no answer by then means deny/);
      // The form stays open: no tasks/get until the run has ended (read through the run, as the host cannot).
      await pollUntil(
        'the run to end while the form is open',
        async () => {
          const read = toolResultOf(
            resultOf(await rig.request('tools/call', { name: 'claude.run.result', arguments: { run_id: taskId }, _meta: meta(false) })),
          );
          return read['completed'] === true;
        },
        { timeoutMs: WAIT_MS, intervalMs: CLIENT_POLL_MS },
      );
      const late = rpcError(
        await rig.request('tasks/update', {
          taskId,
          inputResponses: { [key!]: { action: 'accept', content: { decision: 'allow' } } },
          _meta: meta(true),
        }),
      );
      assert.equal(late['code'], -32602);
      assert.deepEqual(late['data'], { code: 'permission_question_not_pending', path: `/inputResponses/${key!}` });
      assert.match(String(late['message']), /its time to answer ran out.*this answer was not used/);
      // Keys that name nothing of this run are still acknowledged and ignored.
      assert.deepEqual(
        Object.keys(
          resultOf(await rig.request('tasks/update', { taskId, inputResponses: { pq_unknown: { action: 'decline' } }, _meta: meta(true) })),
        ).filter((k) => k !== '_meta'),
        ['resultType'],
      );
      const { final } = await pollUntilTerminal(rig, taskId);
      assert.equal(final['status'], 'completed', JSON.stringify(final));
      const decided = questionsOf(toolResultOf(objAt(final, 'result'))['permission_questions']).decided;
      assert.equal(decided.length, 1);
      assert.deepEqual(
        [decided[0]!['behavior'], decided[0]!['decided_by'], at(decided[0], 'late_answer', 'behavior')],
        ['deny', 'timeout', 'allow'],
        'the model reads that the person allowed too late',
      );
      assert.equal(existsSync(join(rig.dir, 'fake-tool-marker.txt')), false, 'the late allow ran nothing');
      // A second late answer changes nothing: the first is what the result keeps.
      rpcError(await rig.request('tasks/update', { taskId, inputResponses: { [key!]: { action: 'decline' } }, _meta: meta(true) }));
      const again = questionsOf(toolResultOf(objAt(resultOf(await rig.get(taskId)), 'result'))['permission_questions']).decided;
      assert.equal(at(again[0], 'late_answer', 'behavior'), 'allow');
    } finally {
      await rig.close();
    }
  });
});

describe('ask_host on a synchronous claude.run that cannot ask', () => {
  it('2026-07-28 without the tasks extension (Claude Code -p): refused for the era, naming a task-capable client and claude.run.start + claude.run.answer', async () => {
    const rig = createRig();
    try {
      // Claude Code -p declares elicitation on every request; the era still gives a synchronous call no way to ask.
      const refused = resultOf(
        await rig.request('tools/call', {
          name: 'claude.run',
          arguments: { prompt: 'hi', cwd: rig.dir, ask_host: true },
          _meta: meta(false),
        }),
      );
      assert.equal(refused['resultType'], 'complete');
      assert.equal(refused['isError'], true);
      const error = objAt(toolBody(refused), 'error');
      assert.deepEqual([error['code'], error['path']], ['invalid_arguments', '/ask_host']);
      const message = String(error['message']);
      assert.match(message, /2026-07-28/);
      assert.match(message, /tasks extension/);
      assert.match(message, /claude\.run\.start/);
      assert.match(message, /claude\.run\.answer/);
      assert.doesNotMatch(message, /initialize/, 'the declaration is not what is missing');
      const legacy = await rig.providers.toolProvider.call(
        'claude.run',
        { prompt: 'hi', cwd: rig.dir, ask_host: true },
        { signal: new AbortController().signal, progress: undefined, workInvocation: null, protocolVersion: '2025-11-25' },
      );
      assert.equal(legacy.ok, false);
      assert.match(legacy.ok ? '' : legacy.error.message, /did not declare form elicitation at initialize.*claude\.run\.start/);
      assert.deepEqual(
        objs(
          toolResultOf(resultOf(await rig.request('tools/call', { name: 'claude.run.list', arguments: {}, _meta: meta(false) })))['runs'],
          'runs',
        ),
        [],
        'nothing started',
      );
    } finally {
      await rig.close();
    }
  });
});

describe('permission_mode default', () => {
  it('passes the input schema; with ask_host the run asks in the native default mode; alone it is refused naming both ways', async () => {
    const rig = createRig();
    try {
      const call = async (args: Json): Promise<Json> =>
        resultOf(
          await rig.request('tools/call', {
            name: 'claude.run.start',
            arguments: { prompt: '[fake:ask_permission] x', cwd: rig.dir, ...args },
            _meta: meta(false),
          }),
        );
      const alone = await call({ permission_mode: 'default' });
      assert.equal(alone['isError'], true);
      const error = objAt(toolBody(alone), 'error');
      assert.deepEqual([error['code'], error['path']], ['invalid_arguments', '/permission_mode']);
      assert.match(String(error['message']), /add ask_host: true.*leave permission_mode out/);
      const started = await call({ permission_mode: 'default', ask_host: true });
      assert.equal(started['isError'], false, JSON.stringify(started));
      const runId = String(toolResultOf(started)['run_id']);
      await rig.waitReady('asked');
      const read = resultOf(
        await rig.request('tools/call', { name: 'claude.run.events', arguments: { run_id: runId, limit: 1 }, _meta: meta(false) }),
      );
      assert.equal(at(toolResultOf(read), 'events', 0, 'event', 'permissionMode'), 'default');
      await rig.request('tools/call', { name: 'claude.run.cancel', arguments: { run_id: runId }, _meta: meta(false) });
      await rig.request('tools/call', { name: 'claude.run.result', arguments: { run_id: runId, wait_seconds: 20 }, _meta: meta(false) });
    } finally {
      await rig.close();
    }
  });
});

describe('retention bound', () => {
  it(`a completed task stays readable while ${MAX_RETAINED_RUNS} runs are retained, and is gone (-32602) once a newer one evicts it`, async () => {
    const rig = createRig();
    try {
      const first = String(resultOf(await rig.run('say hi', true))['taskId']);
      await pollUntilTerminal(rig, first);
      // Fill the registry to its bound with newer tasks, at most MAX_ACTIVE_RUNS at a time.
      const startBatch = async (count: number): Promise<void> => {
        const ids = await Promise.all(Array.from({ length: count }, async () => String(resultOf(await rig.run('say hi', true))['taskId'])));
        for (const taskId of ids) assert.equal((await pollUntilTerminal(rig, taskId)).final['status'], 'completed');
      };
      for (let made = 1; made < MAX_RETAINED_RUNS; made += MAX_ACTIVE_RUNS)
        await startBatch(Math.min(MAX_ACTIVE_RUNS, MAX_RETAINED_RUNS - made));
      assert.equal(resultOf(await rig.get(first))['status'], 'completed', `readable with ${MAX_RETAINED_RUNS} runs retained`);
      await startBatch(1);
      const gone = rpcError(await rig.get(first));
      assert.equal(gone.code, -32602, 'evicted with its run: the oldest settled run goes first');
      assert.deepEqual(gone.data, { path: '/taskId' });
    } finally {
      await rig.close();
    }
  });
});

describe('statusMessage bound', () => {
  it(`is cut to ${MAX_STATUS_MESSAGE_BYTES} UTF-8 bytes with an ellipsis, and left whole at the bound`, () => {
    const head = 'running: ';
    const payloadBytes = MAX_STATUS_MESSAGE_BYTES - head.length;
    const exact = 'é'.repeat(Math.floor(payloadBytes / 2)) + 'a'.repeat(payloadBytes % 2); // 2-byte characters up to the bound
    assert.equal(Buffer.byteLength(`${head}${exact}`), MAX_STATUS_MESSAGE_BYTES);
    assert.equal(workingStatusMessage('running', exact, false), `${head}${exact}`);
    const cut = workingStatusMessage('running', `${exact}c`, false);
    assert.ok(Buffer.byteLength(cut) <= MAX_STATUS_MESSAGE_BYTES);
    assert.ok(cut.endsWith('…'));
    assert.equal(workingStatusMessage('stopping', null, true), 'stopping (cancel requested)');
  });
});

describe('shutdown with a task in flight', () => {
  it("close() (what SIGINT and stdin EOF lead to) cancels the task's run and waits for its confirmed cleanup", async () => {
    const rig = createRig();
    try {
      const created = resultOf(await rig.run('[fake:slow] keep going', true));
      const taskId = String(created['taskId']);
      await rig.waitReady('streaming');
      const nativePid = num(
        jsonLines(readFileSync(rig.readyFile, 'utf8')).find((line) => line['ready'] === 'streaming')?.['pid'],
        'pid of the streaming line',
      );
      await rig.adapter.close();
      assert.equal(rig.providers.toolProvider.tasks!.get(taskId)?.status, 'cancelled');
      const read = await rig.providers.toolProvider.call(
        'claude.run.result',
        { run_id: taskId, detail: 'full' },
        { signal: new AbortController().signal, progress: undefined, workInvocation: null, protocolVersion: '2026-07-28' },
      );
      assert.equal(read.result?.['cancelled'], true);
      assert.equal(read.result?.['cleanup_confirmed'], true, 'close() returned only after the supervisor proved cleanup');
      assert.throws(() => process.kill(nativePid, 0), /ESRCH/, 'the native process is gone');
    } finally {
      rmSync(rig.dir, { recursive: true, force: true });
    }
  });
});
