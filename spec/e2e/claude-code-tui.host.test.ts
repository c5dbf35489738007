// The pinned real Claude Code 2.1.332 in its interactive terminal UI (under tmux) as the MCP client of this
// server. Interactive mode declares the tasks extension on every modern request, so claude.run comes back
// as a task: the CLI moves the call to the background, polls tasks/get, and wakes the model with the
// result once the task completed. The loopback fake Messages API scripts the model; a transparent tap
// logs the MCP wire. After /exit nothing the session started is left.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastToolResult, promptTag, scenarioByPromptTag, startFakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import type { FakeAnthropic, RecordedRequest } from '../../fixtures/fake-anthropic/server.ts';
import { specBundle } from '../helpers/bundle.ts';
import { createNativeSandbox, pollUntilGone, realClaudeBin } from '../helpers/native-env.ts';
import { pollUntil } from '../helpers/poll.ts';
import { at, isJsonObject, objAt, toolResultOf } from '../helpers/typed-results.ts';
import { readWireLog, wireMessages, type WireEntry, type WireMessage } from './wire-tap-log.ts';
import type { NativeSandbox } from '../helpers/native-env.ts';
import { describeProcesses, LEAK_POLL_MS } from './adapter-tier.ts';

const TAP = fileURLToPath(new URL('../../fixtures/mcp-wire-tap.mjs', import.meta.url));
const TASKS = 'io.modelcontextprotocol/tasks';
const NESTED_REPLY = 'Nested reply delivered through an MCP task.';
/**
 * Each wait is for one event (a wire line, a model request, a screen hint, an exit) and names it; the
 * bound is a liveness bound for one step on a loaded machine, never a guess at how long a chain takes.
 */
const STEP_DEADLINE_MS = 60_000;
/** A nested real run (CLI start, the fake model's turn, cleanup) is the longest single step. */
const RUN_DEADLINE_MS = 120_000;
/** Keys typed before the prompt box is mounted are lost: each try waits this long for the echo. */
const ECHO_DEADLINE_MS = 10_000;
const PROMPT_TRIES = 3;
/** How long a question of the stale-form case waits for an answer (the form must show before it runs out). */
const ASK_BOUND_SECONDS = 10;

type Message = WireMessage;

const until = <T>(
  what: string | (() => string),
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = STEP_DEADLINE_MS,
): Promise<T> => pollUntil(what, probe, { timeoutMs, intervalMs: 50 });

const answerTo = (all: Message[], id: unknown): Message | undefined => all.find((m) => m.dir === 's2c' && m.msg['id'] === id);
/** The newest message of a model request, as JSON text (a wake-up carries the task notification there). */
const newestMessage = (r: RecordedRequest): string =>
  JSON.stringify((isJsonObject(r.body) && Array.isArray(r.body['messages']) ? r.body['messages'] : []).at(-1) ?? null);
/** The answer to a tasks/get that reported the task completed, once there is one. */
const completedPoll = (all: Message[]): Message | undefined =>
  all
    .filter((m) => m.dir === 'c2s' && m.msg['method'] === 'tasks/get')
    .map((poll) => answerTo(all, poll.msg['id']))
    .find((a) => a !== undefined && statusOf(a) === 'completed');
/** The task status a server message reports, if it is a task answer (an error answer has none). */
const statusOf = (m: Message): unknown => (isJsonObject(m.msg['result']) ? m.msg['result']['status'] : undefined);

describe('Claude Code 2.1.332 interactive (TUI) with claude.run as an MCP task', () => {
  let fake: FakeAnthropic;
  let sandbox: NativeSandbox;
  /** One private tmux server per session (a server ends with its last session; reusing it would race its exit). */
  const sockets: string[] = [];
  let bundle: string | undefined;
  before(async () => {
    fake = await startFakeAnthropic({
      scenario: scenarioByPromptTag({
        host_call: {
          kind: 'tool_use',
          tool: 'mcp__crm__claude_run',
          input: { prompt: `say hi ${promptTag('nested')}` },
          followUpText: 'Noted.',
        },
        host_call_long: {
          kind: 'tool_use',
          tool: 'mcp__crm__claude_run',
          input: { prompt: `stream a long time ${promptTag('nested_long')}` },
          followUpText: 'Noted.',
        },
        // The nested model asks for Bash, which the native default mode asks the person about.
        host_ask: {
          kind: 'tool_use',
          tool: 'mcp__crm__claude_run',
          input: { prompt: `make a marker ${promptTag('tool_bash')}`, ask_host: true, ask_host_timeout_seconds: ASK_BOUND_SECONDS },
          followUpText: 'Noted.',
        },
        // ~2.5 s of deltas: long enough for several polls while the task works.
        nested: { kind: 'text', text: NESTED_REPLY, chunkChars: 2, deltaDelayMs: 110 },
        // ~40 s: ended by the user long before.
        nested_long: { kind: 'text', text: 'slow '.repeat(400), chunkChars: 5, deltaDelayMs: 100 },
      }),
    });
    sandbox = await createNativeSandbox({ baseUrl: fake.url });
  });
  after(async () => {
    for (const socket of sockets) {
      try {
        execFileSync('tmux', ['-S', socket, 'kill-server'], { stdio: 'ignore' });
      } catch {
        /* already gone: the session ended with the CLI */
      }
    }
    try {
      assert.deepEqual(describeProcesses(await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS)), []);
    } finally {
      await fake.close();
      await sandbox.cleanup();
    }
  });

  interface HostSession {
    tmux(...args: string[]): string;
    screen(): string;
    wire(): WireEntry[];
    messages(): Message[];
    /**
     * Types `text` once tools/list was answered (earlier, the model request would carry no MCP tool), presses
     * Enter once the prompt box shows it, and returns when the model got it.
     */
    prompt(text: string): Promise<void>;
  }

  /** One interactive CLI in its own tmux server, its MCP server (the bundle) behind the tap. */
  async function startHost(label: string): Promise<HostSession> {
    bundle ??= await specBundle();
    const log = join(sandbox.root, `${label}-wire.jsonl`);
    const config = join(sandbox.root, `${label}-mcp.json`);
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: {
          crm: { type: 'stdio', command: process.execPath, args: [TAP, log, process.execPath, bundle, '--claude-bin', realClaudeBin()] },
        },
      }),
    );
    // A first-run TUI asks about onboarding, the API key and folder trust; answer them ahead, as a user would have.
    await writeFile(
      join(sandbox.home, '.claude.json'),
      JSON.stringify({
        hasCompletedOnboarding: true,
        theme: 'dark',
        numStartups: 5,
        customApiKeyResponses: { approved: [sandbox.apiKey.slice(-20)], rejected: [] },
        projects: { [sandbox.cwd]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, allowedTools: [] } },
      }),
    );
    const env: Record<string, string> = { ...sandbox.env, ENABLE_TOOL_SEARCH: 'false', TERM: 'xterm-256color' };
    // The socket lives (and is removed) with the sandbox.
    const socket = join(sandbox.root, `${label}-tmux.sock`);
    sockets.push(socket);
    const tmux = (...args: string[]): string => execFileSync('tmux', ['-S', socket, ...args]).toString();
    tmux(
      'new-session',
      '-d',
      '-s',
      label,
      '-x',
      '200',
      '-y',
      '50',
      '-c',
      sandbox.cwd,
      ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
      realClaudeBin(),
      '--mcp-config',
      config,
      '--strict-mcp-config',
      '--permission-mode',
      'default',
      '--allowedTools',
      'mcp__crm__claude_run',
    );
    const wire = (): WireEntry[] => readWireLog(log);
    const messages = (): Message[] => wireMessages(wire());
    return {
      tmux: (...args) => tmux(...args),
      screen: () => {
        try {
          return tmux('capture-pane', '-p', '-t', label);
        } catch {
          return '(no pane)';
        }
      },
      wire,
      messages,
      async prompt(text) {
        await until('tools/list answered', () => {
          const all = messages();
          const list = all.find((m) => m.dir === 'c2s' && m.msg['method'] === 'tools/list');
          return list && answerTo(all, list.msg['id']) ? true : undefined;
        });
        // A discover answer later than the CLI's 3 s probe deadline makes the whole session legacy (no tasks):
        // say so, rather than fail later waiting for a task that cannot come (docs/protocol.md).
        const all = messages();
        const discovered = all.find((m) => m.dir === 's2c' && m.msg['id'] === 'server-discover-probe-1');
        const lag = wire().find((e) => e.spawnLagMs !== undefined)?.spawnLagMs ?? 0;
        assert.equal(
          all.some((m) => m.dir === 'c2s' && m.msg['method'] === 'initialize'),
          false,
          `the session went legacy: the discover answer came ${discovered === undefined ? 'never' : `${discovered.t + lag} ms after the tap's spawn`} (Claude Code waits 3,000 ms; load ${process.getBuiltinModule('node:os').loadavg()[0]!.toFixed(1)})`,
        );
        const screen = (): string => {
          try {
            return tmux('capture-pane', '-p', '-t', label);
          } catch {
            return '(no pane)';
          }
        };
        const echo = text.slice(0, 24);
        let echoed = false;
        for (let attempt = 1; attempt <= PROMPT_TRIES && !echoed; attempt++) {
          tmux('send-keys', '-t', label, '-l', text);
          echoed = await until(
            () => `the prompt echoed in the box (try ${attempt})`,
            () => (screen().includes(echo) ? true : undefined),
            ECHO_DEADLINE_MS,
          ).catch(() => false);
          // Lost keys, or half a line typed into a box that mounted meanwhile: clear it and type again.
          if (!echoed) tmux('send-keys', '-t', label, 'C-u');
        }
        assert.ok(echoed, `the prompt box never showed the typed text (screen:\n${screen()})`);
        tmux('send-keys', '-t', label, 'Enter');
        const tag = text.match(/\[fake:[a-z_]+\]/)?.[0] ?? text;
        await until(
          () => `the prompt to reach the model (screen:\n${screen()})`,
          () => (fake.requests.some((r) => r.path === '/v1/messages' && JSON.stringify(r.body).includes(tag)) ? true : undefined),
        );
      },
    };
  }

  /** Native runs started by the server (claude -p …), as opposed to the interactive CLI itself. */
  const nestedRuns = async (): Promise<string[]> =>
    describeProcesses((await sandbox.processes()).filter((p) => p.isBinary && p.cmdline.includes('-p')));

  it("task at once, polls at pollIntervalMs, the model woken with the run's result; /exit leaves nothing", async () => {
    const host = await startHost('complete');
    const { tmux, screen } = host;
    const messages = host.messages;
    const wire = host.wire;
    await host.prompt(`call the tool ${promptTag('host_call')}`);

    // The wake-up is a new turn whose newest message carries the notification (the system prompt mentions the tag too).
    const newest = (r: RecordedRequest): string =>
      JSON.stringify((isJsonObject(r.body) && Array.isArray(r.body['messages']) ? r.body['messages'] : []).at(-1) ?? null);
    const isWake = (r: RecordedRequest): boolean => r.path === '/v1/messages' && newest(r).includes('<task-notification>');
    // By the wire: the tools/call, the poll that sees the run completed, then the wake-up that follows it.
    await until(
      () => `tools/call on the wire (screen:\n${screen()})`,
      () => (messages().some((m) => m.dir === 'c2s' && m.msg['method'] === 'tools/call') ? true : undefined),
    );
    await until(
      () => `a poll answered "completed" (screen:\n${screen()})`,
      () => completedPoll(messages()),
      RUN_DEADLINE_MS,
    );
    const wake = await until(
      () => `the model woken after the completed poll (screen:\n${screen()})`,
      () => fake.requests.find(isWake),
    );

    const all = messages();
    const requests = all.filter((m) => m.dir === 'c2s' && typeof m.msg['method'] === 'string');
    const methods = requests.map((m) => String(m.msg['method']));
    assert.equal(methods[0], 'server/discover');
    assert.equal(methods.includes('initialize'), false, methods.join(', '));
    for (const request of requests) {
      assert.deepEqual(
        at(request.msg, 'params', '_meta', 'io.modelcontextprotocol/clientCapabilities', 'extensions', TASKS),
        {},
        `${String(request.msg['method'])} declares the tasks extension`,
      );
    }
    assert.deepEqual(at(answerTo(all, requests[0]!.msg['id'])?.msg, 'result', 'capabilities', 'extensions'), { [TASKS]: {} });

    // tools/call → a task at once.
    const call = requests.find((m) => m.msg['method'] === 'tools/call');
    assert.ok(call, `tools/call on the wire: ${methods.join(', ')}`);
    const created = answerTo(all, call.msg['id'])!;
    const task = objAt(created.msg, 'result');
    assert.equal(task['resultType'], 'task');
    const taskId = String(task['taskId']);
    assert.match(taskId, /^run_/);
    assert.equal(task['pollIntervalMs'], 1000);
    assert.ok(created.t - call.t < 1000, `the task came back at once (${created.t - call.t} ms)`);

    // The polls: the first one right away, then at the suggested rate, until completed.
    const polls = requests.filter((m) => m.msg['method'] === 'tasks/get');
    assert.ok(polls.length >= 3, `several polls while the run worked (${polls.length})`);
    for (const poll of polls) assert.equal(at(poll.msg, 'params', 'taskId'), taskId);
    const answers = polls.map((poll) => objAt(answerTo(all, poll.msg['id'])?.msg, 'result'));
    assert.ok(
      answers.slice(0, -1).every((a) => a['status'] === 'working'),
      answers.map((a) => a['status']).join(','),
    );
    const completed = answers.at(-1)!;
    assert.equal(completed['status'], 'completed');
    for (let i = 2; i < polls.length; i++) {
      assert.ok(
        polls[i]!.t - polls[i - 1]!.t >= 900,
        `poll ${i} came ${polls[i]!.t - polls[i - 1]!.t} ms after the previous one (pollIntervalMs 1000)`,
      );
    }
    const inline = objAt(completed, 'result');
    assert.equal(inline['isError'], false);
    const run = toolResultOf(inline);
    assert.equal(run['run_id'], taskId);
    assert.equal(run['result'], NESTED_REPLY);
    assert.equal(run['cleanup_confirmed'], true);
    assert.equal(
      requests.some((m) => m.msg['method'] === 'tasks/cancel'),
      false,
    );

    // The model was told at once that the call moved to the background, then woken with the result.
    const backgrounded = fake.requests.find(
      (r) => r.path === '/v1/messages' && lastToolResult(r.body)?.text.includes(taskId) === true && !isWake(r),
    );
    assert.ok(backgrounded, 'a model request carried the "moved to the background" tool result');
    assert.match(lastToolResult(backgrounded.body)!.text, /moved to the background/);
    const wakeText = newest(wake);
    assert.ok(wakeText.includes(`MCP task ${taskId}`), 'the wake-up names the server task');
    assert.ok(wakeText.includes(NESTED_REPLY), 'the wake-up carries the run result');

    // /exit: nothing is running any more, so the CLI exits at once and ends the server with a signal.
    tmux('send-keys', '-t', 'complete', '-l', '/exit');
    tmux('send-keys', '-t', 'complete', 'Enter');
    const exit = await until(
      () => `the server to exit (screen:\n${screen()})`,
      () => wire().find((e) => e.exit !== undefined),
    );
    assert.deepEqual({ exit: exit.exit, signal: exit.signal }, { exit: 0, signal: null }, 'the server exited 0 on its own');
    assert.deepEqual(describeProcesses(await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS)), [], 'nothing left after /exit');
  });

  it('a question whose form outlives its bound: denied at the bound, the late answer refused (-32602), the model told', async (t) => {
    const host = await startHost('stale');
    const { screen } = host;
    await host.prompt(`ask the person ${promptTag('host_ask')}`);
    await until(
      () => `the permission form (screen:\n${screen()})`,
      () => (screen().includes('requests your input') ? true : undefined),
      RUN_DEADLINE_MS,
    );
    assert.match(screen(), /Answer within \d+ seconds?;/, 'the form says the time left in relative terms');
    const shownAt = host
      .messages()
      .filter((m) => m.dir === 's2c' && statusOf(m) === 'input_required')
      .at(-1)!.t;
    // The bound passes and the run ends (denied) while the form stays open; Claude Code does not poll meanwhile.
    await until(
      () => `the nested run to end while the form is open (screen:\n${screen()})`,
      async () => ((await nestedRuns()).length === 0 ? true : undefined),
      RUN_DEADLINE_MS,
    );
    assert.ok(screen().includes('requests your input'), 'the form is still on screen: nothing on the wire can close it');
    assert.equal(
      host.messages().some((m) => m.dir === 'c2s' && m.msg['method'] === 'tasks/get' && m.t > shownAt),
      false,
      'no poll while the form is open',
    );
    // Answer the stale form: to the buttons, then Decline.
    for (const key of ['Down', 'Down', 'Right', 'Enter']) host.tmux('send-keys', '-t', 'stale', key);
    const update = await until(
      () => `tasks/update on the wire (screen:\n${screen()})`,
      () => host.messages().find((m) => m.dir === 'c2s' && m.msg['method'] === 'tasks/update'),
    );
    const refused = await until('the answer to tasks/update', () => answerTo(host.messages(), update.msg['id']));
    t.diagnostic(`tasks/update → ${JSON.stringify(refused.msg['error'] ?? refused.msg['result'])}`);
    assert.equal(at(refused.msg, 'error', 'code'), -32602, 'the late answer is refused');
    assert.equal(at(refused.msg, 'error', 'data', 'code'), 'permission_question_not_pending');
    // Claude Code re-polls for the real state, finds the run completed and wakes the model with its result.
    await until(
      () => `a poll answered "completed" (screen:\n${screen()})`,
      () => completedPoll(host.messages()),
    );
    const wake = await until(
      () => `the model woken with the result (screen:\n${screen()})`,
      () =>
        fake.requests.find(
          (r) => r.path === '/v1/messages' && newestMessage(r).includes('<task-notification>') && newestMessage(r).includes('late_answer'),
        ),
    );
    const told = newestMessage(wake);
    for (const part of ['decided_by', 'timeout', 'late_answer']) assert.ok(told.includes(part), `the model reads ${part}`);
    assert.equal(existsSync(join(sandbox.cwd, 'fake-tool-marker.txt')), false, 'the denied tool did not run');
    host.tmux('send-keys', '-t', 'stale', '-l', '/exit');
    host.tmux('send-keys', '-t', 'stale', 'Enter');
    const exit = await until(
      () => `the server to exit (screen:\n${screen()})`,
      () => host.wire().find((e) => e.exit !== undefined),
    );
    assert.equal(exit.exit, 0);
  });

  /** Starts a long task and waits until the CLI polled it twice (it is backgrounded and being watched). */
  async function longTask(host: HostSession): Promise<string> {
    await host.prompt(`call the long tool ${promptTag('host_call_long')}`);
    return until(
      () => `two polls of the task (screen:\n${host.screen()})`,
      () => {
        const all = host.messages();
        const call = all.find((m) => m.dir === 'c2s' && m.msg['method'] === 'tools/call');
        const task = call && answerTo(all, call.msg['id'])?.msg['result'];
        const polls = all.filter((m) => m.dir === 'c2s' && m.msg['method'] === 'tasks/get');
        return isJsonObject(task) && task['resultType'] === 'task' && polls.length >= 2 ? String(task['taskId']) : undefined;
      },
    );
  }

  it('stop from the task panel: every tasks/cancel is acknowledged, the run ends, polling stops', async (t) => {
    const host = await startHost('cancel');
    const taskId = await longTask(host);
    await until('the nested run to be working', async () => ((await nestedRuns()).length === 1 ? true : undefined));
    // Down opens the task list, Enter the task's detail panel, x stops it (keys as captured from 2.1.332).
    // Each key waits for the hint the previous one brings up in the footer or panel.
    await until(
      () => `the task in the footer (screen:\n${host.screen()})`,
      () => (host.screen().includes('to manage') ? true : undefined),
    );
    host.tmux('send-keys', '-t', 'cancel', 'Down');
    await until(
      () => `the task list selected (screen:\n${host.screen()})`,
      () => (host.screen().includes('enter to view tasks') ? true : undefined),
    );
    host.tmux('send-keys', '-t', 'cancel', 'Enter');
    await until(
      () => `the task detail panel (screen:\n${host.screen()})`,
      () => (host.screen().includes('to stop') ? true : undefined),
    );
    host.tmux('send-keys', '-t', 'cancel', 'x');
    const cancels = await until(
      () => `tasks/cancel on the wire (screen:\n${host.screen()})`,
      () => {
        const found = host.messages().filter((m) => m.dir === 'c2s' && m.msg['method'] === 'tasks/cancel');
        return found.length > 0 ? found : undefined;
      },
    );
    host.tmux('send-keys', '-t', 'cancel', 'Escape');
    for (const cancel of cancels) assert.equal(at(cancel.msg, 'params', 'taskId'), taskId);
    const acks = await until('every tasks/cancel answered', () => {
      const all = host.messages();
      const answers = cancels.map((c) => answerTo(all, c.msg['id']));
      return answers.every((a) => a !== undefined) ? answers : undefined;
    });
    for (const ack of acks) assert.equal(at(ack.msg, 'result', 'resultType'), 'complete', JSON.stringify(ack.msg));
    // The run is cancelled through the supervisor: the nested claude is gone while the session goes on.
    assert.deepEqual(
      await pollUntilGone(async () => (await sandbox.processes()).filter((p) => p.isBinary && p.cmdline.includes('-p')), LEAK_POLL_MS).then(
        describeProcesses,
      ),
      [],
    );
    host.tmux('send-keys', '-t', 'cancel', '-l', '/exit');
    host.tmux('send-keys', '-t', 'cancel', 'Enter');
    const exit = await until(
      () => `the server to exit (screen:\n${host.screen()})`,
      () => host.wire().find((e) => e.exit !== undefined),
    );
    assert.equal(exit.exit, 0);
    // Every cancel the panel sent (2.1.332 sends two at the same millisecond) was acknowledged.
    const all = host.messages();
    const every = all.filter((m) => m.dir === 'c2s' && m.msg['method'] === 'tasks/cancel');
    t.diagnostic(`tasks/cancel sent ${every.length} time(s), at ${every.map((m) => m.t).join(', ')} ms`);
    for (const cancel of every) assert.equal(at(answerTo(all, cancel.msg['id'])?.msg, 'result', 'resultType'), 'complete');
    const lastCancel = Math.max(...every.map((m) => m.t));
    assert.equal(
      all.some((m) => m.dir === 'c2s' && m.msg['method'] === 'tasks/get' && m.t > lastCancel),
      false,
      'no poll after the stop',
    );
    assert.deepEqual(describeProcesses(await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS)), [], 'nothing left after /exit');
  });

  it('/exit with the task still working ("Exit and stop tasks"): no tasks/cancel, SIGINT, the server cancels the run and exits 0', async () => {
    const host = await startHost('exit');
    await longTask(host);
    await until('the nested run to be working', async () => ((await nestedRuns()).length === 1 ? true : undefined));
    host.tmux('send-keys', '-t', 'exit', '-l', '/exit');
    host.tmux('send-keys', '-t', 'exit', 'Enter');
    await until(
      () => `the exit dialog (screen:\n${host.screen()})`,
      () => (host.screen().includes('Exit and stop tasks') ? true : undefined),
    );
    host.tmux('send-keys', '-t', 'exit', 'Enter');
    const exit = await until(
      () => `the server to exit (screen:\n${host.screen()})`,
      () => host.wire().find((e) => e.exit !== undefined),
    );
    const wire = host.wire();
    assert.equal(
      wire.some((e) => e.line?.includes('"tasks/cancel"') === true),
      false,
      'the host sent no tasks/cancel',
    );
    assert.equal(
      wire.find((e) => e.signal !== undefined && e.exit === undefined)?.signal,
      'SIGINT',
      'the host ended the server with SIGINT',
    );
    assert.deepEqual({ exit: exit.exit, signal: exit.signal }, { exit: 0, signal: null }, 'the server cancelled its task run and exited 0');
    assert.deepEqual(
      describeProcesses(await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS)),
      [],
      'the nested run and everything else are gone',
    );
  });
});
