// ask_host on the real pinned binary: the nested CLI's permission prompt reaches the person at the MCP
// client in-band, as a can_use_tool control request on the native's own stdout answered on its stdin
// (--permission-prompt-tool stdio). The fake model asks for Bash `touch fake-tool-marker.txt`, which the
// native default mode would ask about; what the person answers decides whether it ran.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ElicitRequestSchema, ResultSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { promptTag } from '../../fixtures/fake-anthropic/server.ts';
import { inCwd, marker, pollTool, startAdapterTier } from './adapter-tier.ts';
import type { AdapterTier } from './adapter-tier.ts';
import { toolErrorOf } from '../helpers/tool-harness.ts';
import { arr, at, eventPageOf, obj, objAt, objs, questionsOf, toolBody, type QuestionsView } from '../helpers/typed-results.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import type { ToolErrorData } from '../../lib/tool-errors.ts';

type Json = JsonObject;

/** Socket inodes among a process's descriptors (none when it is gone). */
function socketInodes(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        return inode === undefined ? [] : [inode];
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

/** __SO_ACCEPTCON in /proc/net/unix Flags: the socket listens. */
const UNIX_LISTENING_FLAG = 0x10000;

/**
 * While a question waits: the server and the run's supervisor hold no listening Unix socket and no TCP
 * listener, no process but those exists (no bridge), and the native was started with
 * the stdio prompt tool and no --mcp-config.
 */
async function assertInBand(tier: AdapterTier): Promise<void> {
  const strays = await tier.strays();
  const natives = strays.filter((p) => p.isBinary);
  assert.equal(natives.length, 1, 'one native process');
  const argv = natives[0]!.cmdline;
  const at = argv.indexOf('--permission-prompt-tool');
  assert.equal(argv[at + 1], 'stdio', 'the native asks on its own stdout');
  assert.equal(argv.includes('--mcp-config'), false, 'no MCP server is added for asking');
  assert.deepEqual(
    strays
      .filter((p) => !p.isBinary && !p.cmdline.some((arg) => arg.includes('__supervisor') || arg.endsWith('supervisor/child/main.ts')))
      .map((p) => p.cmdline.join(' ')),
    [],
    'no process besides the supervisor and the native (no bridge)',
  );
  // The native CLI listens on a messaging socket of its own (<TMPDIR>/cc-socks/<pid>.sock, measured on 2.1.332);
  // what this package adds for asking is judged on the server and the supervisor.
  const inodes = new Set([tier.serverPid, ...strays.filter((p) => !p.isBinary).map((p) => p.pid)].flatMap(socketInodes));
  const listening = readFileSync('/proc/net/unix', 'utf8')
    .split('\n')
    .slice(1)
    .map((row) => row.trim().split(/\s+/))
    .filter((cols) => cols.length >= 7 && inodes.has(cols[6]!) && (Number.parseInt(cols[3]!, 16) & UNIX_LISTENING_FLAG) !== 0);
  assert.deepEqual(listening, [], 'no listening Unix socket');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const listeners = readFileSync(table, 'utf8')
      .split('\n')
      .slice(1)
      .map((row) => row.trim().split(/\s+/))
      .filter((cols) => cols.length >= 10 && cols[3] === '0A' && inodes.has(cols[9]!));
    assert.deepEqual(listeners, [], `no TCP listener (${table})`);
  }
}

describe('adapter over the real binary: ask_host', () => {
  let tier: AdapterTier;
  before(async () => {
    tier = await startAdapterTier();
  });
  after(async () => {
    await tier.close();
  });

  const start = async (cwd: string, label: string, extra: Json = {}): Promise<string> => {
    const out = await tier.call('claude.run.start', {
      prompt: `make a marker ${marker(label)} ${promptTag('tool_bash')}`,
      cwd,
      ask_host: true,
      ...extra,
    });
    assert.equal(out.isError, false, JSON.stringify(out.error));
    assert.ok(out.result['permission_questions'], 'an ask_host run shows its questions from the start');
    return String(out.result['run_id']);
  };
  const questions = async (runId: string): Promise<QuestionsView> =>
    questionsOf((await tier.call('claude.run.result', { run_id: runId })).result['permission_questions']);
  const firstQuestion = (runId: string): Promise<Json> =>
    pollTool('a pending permission question', async () => (await questions(runId)).pending[0]);
  const settle = async (runId: string): Promise<Json> => {
    const out = await tier.call('claude.run.result', { run_id: runId, wait_seconds: 30, detail: 'full' });
    assert.equal(out.result['completed'], true, 'settled');
    return out.result;
  };
  /** A call that must fail with a tool error (the tier's call() expects a result object). */
  const refused = async (name: string, args: Record<string, unknown>): Promise<ToolErrorData> => {
    const answer = await tier.client.callTool({ name, arguments: args });
    assert.equal(answer.isError, true, `${name} must fail`);
    const error = toolErrorOf(toolBody(answer)['error']);
    assert.ok(error, `${name}: a tool error`);
    return error;
  };

  it('allow: the question shows run, tool and exact input; the tool ran; nothing is denied', async () => {
    await inCwd(tier, async (cwd) => {
      const runId = await start(cwd, 'allow');
      const q = await firstQuestion(runId);
      assert.equal(q['tool_name'], 'Bash');
      assert.equal(q['input'], JSON.stringify({ command: 'touch fake-tool-marker.txt', description: 'Create a marker file' }));
      assert.equal(q['input_truncated'], false);
      assert.match(String(q['tool_use_id']), /^toolu_/);
      assert.equal(existsSync(join(cwd, 'fake-tool-marker.txt')), false, 'nothing ran before the answer');
      await assertInBand(tier);
      const listed = objs((await tier.call('claude.run.list', {})).result['runs']).find((run) => run['run_id'] === runId);
      assert.equal(listed?.['permission_questions_pending'], 1, 'claude.run.list shows the waiting question');
      const answered = await tier.call('claude.run.answer', { run_id: runId, question_id: q['question_id'], decision: 'allow' });
      assert.equal(answered.isError, false);
      assert.equal(at(answered.result, 'question', 'behavior'), 'allow');
      const r = await settle(runId);
      assert.equal(r['is_error'], false);
      assert.deepEqual(r['permission_denials'], []);
      assert.equal(existsSync(join(cwd, 'fake-tool-marker.txt')), true, 'the allowed tool ran');
      const pq = questionsOf(r['permission_questions']);
      assert.deepEqual(pq.pending, []);
      assert.deepEqual(
        pq.decided.map((d) => [d['question_id'], d['behavior'], d['decided_by']]),
        [[q['question_id'], 'allow', 'host']],
      );
      const init = eventPageOf((await tier.call('claude.run.events', { run_id: runId, limit: 1 })).result).events;
      assert.equal(init[0]?.event['permissionMode'], 'default', 'without permission_mode the native default mode asks');
      const again = await refused('claude.run.answer', { run_id: runId, question_id: q['question_id'], decision: 'deny' });
      assert.equal(again.code, 'permission_question_not_pending', 'a decided question cannot be answered again');
    });
  });

  it('deny with a reason: the tool did not run, the denial is reported with the reason the model saw', async () => {
    await inCwd(tier, async (cwd) => {
      const runId = await start(cwd, 'deny');
      const q = await firstQuestion(runId);
      await tier.call('claude.run.answer', { run_id: runId, question_id: q['question_id'], decision: 'deny', reason: 'not in this repo' });
      const r = await settle(runId);
      assert.equal(existsSync(join(cwd, 'fake-tool-marker.txt')), false, 'the denied tool did not run');
      const denials = objs(r['permission_denials']);
      assert.equal(denials.length, 1);
      assert.equal(at(denials, 0, 'tool_name'), 'Bash');
      assert.equal(at(denials, 0, 'tool_input', 'command'), 'touch fake-tool-marker.txt');
      const events = JSON.stringify((await tier.call('claude.run.events', { run_id: runId, limit: 256 })).result['events']);
      assert.ok(events.includes('The person at the MCP client denied this tool use: not in this repo'), 'the model read the reason');
      assert.deepEqual(
        questionsOf(r['permission_questions']).decided.map((d) => [d['behavior'], d['decided_by']]),
        [['deny', 'host']],
      );
    });
  });

  it('no answer: denied after ask_host_timeout_seconds, reported as a denial', async () => {
    await inCwd(tier, async (cwd) => {
      const runId = await start(cwd, 'silent', { ask_host_timeout_seconds: 2 });
      const q = await firstQuestion(runId);
      const r = await settle(runId);
      assert.equal(existsSync(join(cwd, 'fake-tool-marker.txt')), false);
      assert.equal(arr(r['permission_denials']).length, 1);
      const d = objAt(questionsOf(r['permission_questions']).decided, 0);
      assert.equal(d['question_id'], q['question_id']);
      assert.equal(d['decided_by'], 'timeout');
      const waitedMs = Date.parse(String(d['decided_at'])) - Date.parse(String(d['asked_at']));
      assert.ok(waitedMs >= 1900 && waitedMs < 10_000, `denied at the bound, not before (${waitedMs} ms)`);
      const late = await refused('claude.run.answer', { run_id: runId, question_id: q['question_id'], decision: 'allow' });
      assert.equal(late.code, 'permission_question_not_pending', 'an expired question cannot be allowed');
    });
  });

  it('cancel while waiting: the run is cancelled and cleaned up as usual; the question is denied', async () => {
    await inCwd(tier, async (cwd) => {
      const runId = await start(cwd, 'cancel');
      const q = await firstQuestion(runId);
      await tier.call('claude.run.cancel', { run_id: runId });
      const r = await settle(runId);
      assert.equal(at(r, 'error', 'code'), 'cancelled');
      assert.equal(r['cleanup_confirmed'], true);
      assert.equal(existsSync(join(cwd, 'fake-tool-marker.txt')), false);
      const d = objAt(questionsOf(r['permission_questions']).decided, 0);
      assert.equal(d['question_id'], q['question_id']);
      assert.equal(d['behavior'], 'deny');
    });
  });

  it('questions of two runs never mix: a question id answers only on its own run', async () => {
    await inCwd(tier, async (cwd) => {
      const a = await start(cwd, 'two-a');
      const qa = await firstQuestion(a);
      const other = await tier.newCwd();
      try {
        const b = await start(other, 'two-b');
        const qb = await firstQuestion(b);
        const crossed = await refused('claude.run.answer', { run_id: b, question_id: qa['question_id'], decision: 'allow' });
        assert.equal(crossed.code, 'permission_question_not_pending');
        await tier.call('claude.run.answer', { run_id: a, question_id: qa['question_id'], decision: 'deny' });
        await tier.call('claude.run.answer', { run_id: b, question_id: qb['question_id'], decision: 'allow' });
        await settle(a);
        await settle(b);
        assert.equal(existsSync(join(cwd, 'fake-tool-marker.txt')), false, 'run a was denied');
        assert.equal(existsSync(join(other, 'fake-tool-marker.txt')), true, 'run b was allowed');
      } finally {
        await tier.dropCwd(other);
      }
    });
  });

  it('refused with input errors when the run cannot ask, starting nothing', async () => {
    await inCwd(tier, async (cwd) => {
      const sync = await refused('claude.run', { prompt: 'hi', cwd, ask_host: true });
      assert.deepEqual([sync.code, sync.path], ['invalid_arguments', '/ask_host']);
      assert.match(sync.message, /claude\.run\.start/);
      const dontAsk = await refused('claude.run.start', { prompt: 'hi', cwd, ask_host: true, permission_mode: 'dontAsk' });
      assert.deepEqual([dontAsk.code, dontAsk.path], ['invalid_arguments', '/permission_mode']);
      assert.match(dontAsk.message, /never asks/);
      const orphan = await refused('claude.run.start', { prompt: 'hi', cwd, ask_host_timeout_seconds: 5 });
      assert.deepEqual([orphan.code, orphan.path], ['invalid_arguments', '/ask_host_timeout_seconds']);
      const idle = await refused('claude.run.start', {
        prompt: 'hi',
        cwd,
        ask_host: true,
        ask_host_timeout_seconds: 60,
        idle_timeout_seconds: 30,
      });
      assert.deepEqual([idle.code, idle.path], ['invalid_arguments', '/idle_timeout_seconds']);
      const listed = objs((await tier.call('claude.run.list', {})).result['runs']);
      assert.equal(listed.filter((run) => !run['completed']).length, 0, 'nothing was started');
    });
  });
});

describe('adapter over the real binary: ask_host through elicitation (legacy era)', () => {
  let tier: AdapterTier;
  let onElicit: (params: Json, signal: AbortSignal) => Promise<ElicitResult> = async () => ({ action: 'decline' });
  const asked: Json[] = [];
  before(async () => {
    tier = await startAdapterTier({ clientCapabilities: { elicitation: { form: {} } } });
    tier.client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      const params = obj(request.params, 'elicitation/create params');
      asked.push(params);
      return onElicit(params, extra.signal);
    });
  });
  after(async () => {
    await tier.close();
  });

  it('allow in the form: claude.run waits, the person sees run, tool and input, the tool ran', async () => {
    await inCwd(tier, async (cwd) => {
      asked.length = 0;
      onElicit = async () => ({ action: 'accept', content: { decision: 'allow' } });
      const out = await tier.call('claude.run', {
        prompt: `make a marker ${marker('elicit-allow')} ${promptTag('tool_bash')}`,
        cwd,
        ask_host: true,
      });
      assert.equal(out.isError, false, JSON.stringify(out.error));
      assert.equal(asked.length, 1);
      const message = String(asked[0]?.['message']);
      assert.ok(
        message.includes(String(out.result['run_id'])) &&
          message.includes('Bash') &&
          message.includes(JSON.stringify({ command: 'touch fake-tool-marker.txt', description: 'Create a marker file' })),
        message,
      );
      assert.equal(asked[0]?.['mode'], 'form');
      assert.deepEqual(out.result['permission_denials'], []);
      assert.equal(existsSync(join(cwd, 'fake-tool-marker.txt')), true, 'the allowed tool ran');
      const decided = questionsOf(out.result['permission_questions']).decided;
      assert.deepEqual(
        decided.map((d) => [d['behavior'], d['decided_by']]),
        [['allow', 'host']],
      );
    });
  });

  it('decline in the form: denied and reported', async () => {
    await inCwd(tier, async (cwd) => {
      onElicit = async () => ({ action: 'decline' });
      const out = await tier.call('claude.run', {
        prompt: `make a marker ${marker('elicit-decline')} ${promptTag('tool_bash')}`,
        cwd,
        ask_host: true,
      });
      assert.equal(existsSync(join(cwd, 'fake-tool-marker.txt')), false);
      assert.equal(arr(out.result['permission_denials']).length, 1);
    });
  });

  it('an open form past the bound: denied, and the elicitation is withdrawn from the client', async () => {
    await inCwd(tier, async (cwd) => {
      let withdrawn = false;
      onElicit = (_params, signal) =>
        new Promise((resolve) => {
          signal.addEventListener(
            'abort',
            () => {
              withdrawn = true;
              resolve({ action: 'cancel' });
            },
            { once: true },
          );
        });
      const out = await tier.call('claude.run', {
        prompt: `make a marker ${marker('elicit-silent')} ${promptTag('tool_bash')}`,
        cwd,
        ask_host: true,
        ask_host_timeout_seconds: 2,
      });
      assert.equal(existsSync(join(cwd, 'fake-tool-marker.txt')), false);
      assert.equal(arr(out.result['permission_denials']).length, 1);
      const decided = questionsOf(out.result['permission_questions']).decided;
      assert.equal(decided[0]?.['decided_by'], 'timeout');
      assert.equal(withdrawn, true, 'notifications/cancelled reached the client for the open form');
    });
  });
});

describe('adapter over the real binary: ask_host as a task going input_required (2026-07-28)', () => {
  let tier: AdapterTier;
  before(async () => {
    tier = await startAdapterTier();
  });
  after(async () => {
    await tier.close();
  });

  const TASKS = 'io.modelcontextprotocol/tasks';
  /** Claude Code's interactive _meta: a modern request that declares the tasks extension. */
  const META = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'claude-code', version: '2.1.332' },
    'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {}, url: {} }, extensions: { [TASKS]: {} } },
  };
  // The SDK 1.32.2 client types only the methods it knows; the modern tasks methods go through as a plain request.
  const modern = async (method: string, params: Json): Promise<Json> =>
    obj(await tier.client.request({ method, params: { ...params, _meta: META } } as never, ResultSchema), `${method} result`);
  const untilStatus = (taskId: string, statuses: readonly string[]): Promise<Json> =>
    pollTool(`task ${statuses.join('/')}`, async () => {
      const task = await modern('tasks/get', { taskId });
      return statuses.includes(String(task['status'])) ? task : undefined;
    });

  for (const [label, response, ran] of [
    ['accept allow', { action: 'accept', content: { decision: 'allow' } }, true],
    ['decline', { action: 'decline' }, false],
  ] as const) {
    it(`input_required carries the question as a form; tasks/update with ${label} decides it`, async () => {
      await inCwd(tier, async (cwd) => {
        const created = await modern('tools/call', {
          name: 'claude.run',
          arguments: { prompt: `make a marker ${marker('task')} ${promptTag('tool_bash')}`, cwd, ask_host: true },
        });
        assert.equal(created['resultType'], 'task', JSON.stringify(created));
        const taskId = String(created['taskId']);
        const asking = await untilStatus(taskId, ['input_required']);
        assert.match(String(asking['statusMessage']), /permission answer: Bash/);
        const [key, request] = Object.entries(objAt(asking, 'inputRequests'))[0]!;
        assert.equal(at(request, 'method'), 'elicitation/create');
        const params = objAt(request, 'params');
        assert.equal(params['mode'], 'form');
        assert.ok(String(params['message']).includes(taskId) && String(params['message']).includes('touch fake-tool-marker.txt'));
        assert.deepEqual(
          await modern('tasks/update', {
            taskId,
            inputResponses: { 'not-outstanding': { action: 'accept', content: { decision: 'allow' } } },
          }),
          { resultType: 'complete', _meta: (await modern('tasks/update', { taskId, inputResponses: {} }))['_meta'] },
          'a key that is not outstanding is acknowledged and ignored',
        );
        assert.equal((await modern('tasks/get', { taskId }))['status'], 'input_required', 'still asking');
        await modern('tasks/update', { taskId, inputResponses: { [key]: response } });
        const done = await untilStatus(taskId, ['completed', 'failed', 'cancelled']);
        assert.equal(done['status'], 'completed');
        assert.equal(existsSync(join(cwd, 'fake-tool-marker.txt')), ran);
        const r = await tier.full(taskId);
        assert.equal(arr(r['permission_denials']).length, ran ? 0 : 1);
      });
    });
  }
});
