// The pinned real Claude Code 2.1.332 in its interactive terminal UI (under tmux) as the MCP client of this
// server. Interactive mode declares the tasks extension on every modern request, so claude.run comes back
// as a task: the CLI moves the call to the background, polls tasks/get, and wakes the model with the
// result once the task completed. The loopback fake Messages API scripts the model; a transparent tap
// logs the MCP wire. After /exit nothing the session started is left.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { lastToolResult, promptTag, scenarioByPromptTag, startFakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import type { FakeAnthropic, RecordedRequest } from '../../fixtures/fake-anthropic/server.ts';
import { buildBundle } from '../../scripts/build.ts';
import { createNativeSandbox, pollUntilGone, realClaudeBin } from '../helpers/native-env.ts';
import type { NativeSandbox } from '../helpers/native-env.ts';
import { describeProcesses, LEAK_POLL_MS } from './adapter-tier.ts';

const TAP = fileURLToPath(new URL('../../fixtures/mcp-wire-tap.mjs', import.meta.url));
const TASKS = 'io.modelcontextprotocol/tasks';
const NESTED_REPLY = 'Nested reply delivered through an MCP task.';
/** Each wait is for an event (a wire line, a model request, an exit); only a hang reaches this. */
const STEP_DEADLINE_MS = 60_000;

type Json = Record<string, unknown>;
interface WireEntry { readonly t: number; readonly dir?: 'c2s' | 's2c'; readonly line?: string; readonly signal?: string; readonly exit?: number | null }
interface Message { readonly t: number; readonly dir: 'c2s' | 's2c'; readonly msg: Json }

async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  const deadline = performance.now() + STEP_DEADLINE_MS;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(50);
  }
}

describe('Claude Code 2.1.332 interactive (TUI) with claude.run as an MCP task', () => {
  let fake: FakeAnthropic;
  let sandbox: NativeSandbox;
  let socket: string;
  before(async () => {
    fake = await startFakeAnthropic({
      scenario: scenarioByPromptTag({
        host_call: { kind: 'tool_use', tool: 'mcp__crm__claude_run', input: { prompt: `say hi ${promptTag('nested')}` }, followUpText: 'Noted.' },
        // ~2.5 s of deltas: long enough for several polls while the task works.
        nested: { kind: 'text', text: NESTED_REPLY, chunkChars: 2, deltaDelayMs: 110 },
      }),
    });
    sandbox = await createNativeSandbox({ baseUrl: fake.url });
    // A private tmux server whose socket lives (and is removed) with the sandbox.
    socket = join(sandbox.root, 'tmux.sock');
  });
  after(async () => {
    try { execFileSync('tmux', ['-S', socket, 'kill-server'], { stdio: 'ignore' }); } catch { /* already gone: the session ended with the CLI */ }
    try {
      assert.deepEqual(describeProcesses(await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS)), []);
    } finally {
      await fake.close();
      await sandbox.cleanup();
    }
  });

  it('task at once, polls at pollIntervalMs, the model woken with the run\'s result; /exit leaves nothing', async () => {
    const bundle = (await buildBundle(join(sandbox.root, 'dist'))).file;
    const log = join(sandbox.root, 'wire.jsonl');
    const config = join(sandbox.root, 'mcp.json');
    await writeFile(config, JSON.stringify({ mcpServers: { crm: { type: 'stdio', command: process.execPath, args: [TAP, log, process.execPath, bundle, '--claude-bin', realClaudeBin()] } } }));
    // A first-run TUI asks about onboarding, the API key and folder trust; answer them ahead, as a user would have.
    await writeFile(join(sandbox.home, '.claude.json'), JSON.stringify({
      hasCompletedOnboarding: true, theme: 'dark', numStartups: 5,
      customApiKeyResponses: { approved: [sandbox.apiKey.slice(-20)], rejected: [] },
      projects: { [sandbox.cwd]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, allowedTools: [] } },
    }));
    const env: Record<string, string> = { ...sandbox.env, ENABLE_TOOL_SEARCH: 'false', TERM: 'xterm-256color' };
    const tmux = (...args: string[]): string => execFileSync('tmux', ['-S', socket, ...args]).toString();
    tmux('new-session', '-d', '-s', 'host', '-x', '200', '-y', '50', '-c', sandbox.cwd, ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
      realClaudeBin(), '--mcp-config', config, '--strict-mcp-config', '--permission-mode', 'default', '--allowedTools', 'mcp__crm__claude_run');
    const screen = (): string => { try { return tmux('capture-pane', '-p', '-t', 'host'); } catch { return '(no pane)'; } };

    const wire = (): WireEntry[] => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as WireEntry) : []);
    const messages = (): Message[] => wire().filter((e) => e.line !== undefined).map((e) => ({ t: e.t, dir: e.dir as 'c2s' | 's2c', msg: JSON.parse(e.line as string) as Json }));
    const answerTo = (all: Message[], id: unknown): Message | undefined => all.find((m) => m.dir === 's2c' && m.msg['id'] === id);

    // Type the prompt only once tools/list was answered (earlier, the model request would carry no MCP tool).
    await until('tools/list answered', () => {
      const all = messages();
      const list = all.find((m) => m.dir === 'c2s' && m.msg['method'] === 'tools/list');
      return list && answerTo(all, list.msg['id']) ? true : undefined;
    });
    tmux('send-keys', '-t', 'host', '-l', `call the tool ${promptTag('host_call')}`);
    tmux('send-keys', '-t', 'host', 'Enter');

    // The wake-up is a new turn whose newest message carries the notification (the system prompt mentions the tag too).
    const newest = (r: RecordedRequest): string => JSON.stringify(((r.body as { messages?: unknown[] } | null)?.messages ?? []).at(-1) ?? null);
    const isWake = (r: RecordedRequest): boolean => r.path === '/v1/messages' && newest(r).includes('<task-notification>');
    const wake = await until(`the model woken by the task (screen:\n${screen()})`, () => fake.requests.find(isWake));

    const all = messages();
    const requests = all.filter((m) => m.dir === 'c2s' && typeof m.msg['method'] === 'string');
    const methods = requests.map((m) => String(m.msg['method']));
    assert.equal(methods[0], 'server/discover');
    assert.equal(methods.includes('initialize'), false, methods.join(', '));
    for (const request of requests) {
      const caps = ((request.msg['params'] as Json)['_meta'] as Json)['io.modelcontextprotocol/clientCapabilities'] as Json;
      assert.deepEqual((caps['extensions'] as Json)[TASKS], {}, `${String(request.msg['method'])} declares the tasks extension`);
    }
    const discover = answerTo(all, requests[0]!.msg['id'])!.msg['result'] as Json;
    assert.deepEqual((discover['capabilities'] as Json)['extensions'], { [TASKS]: {} });

    // tools/call → a task at once.
    const call = requests.find((m) => m.msg['method'] === 'tools/call');
    assert.ok(call, `tools/call on the wire: ${methods.join(', ')}`);
    const created = answerTo(all, call.msg['id'])!;
    const task = created.msg['result'] as Json;
    assert.equal(task['resultType'], 'task');
    const taskId = String(task['taskId']);
    assert.match(taskId, /^run_/);
    assert.equal(task['pollIntervalMs'], 1000);
    assert.ok(created.t - call.t < 1000, `the task came back at once (${created.t - call.t} ms)`);

    // The polls: the first one right away, then at the suggested rate, until completed.
    const polls = requests.filter((m) => m.msg['method'] === 'tasks/get');
    assert.ok(polls.length >= 3, `several polls while the run worked (${polls.length})`);
    for (const poll of polls) assert.equal((poll.msg['params'] as Json)['taskId'], taskId);
    const answers = polls.map((poll) => answerTo(all, poll.msg['id'])!.msg['result'] as Json);
    assert.ok(answers.slice(0, -1).every((a) => a['status'] === 'working'), answers.map((a) => a['status']).join(','));
    const completed = answers.at(-1)!;
    assert.equal(completed['status'], 'completed');
    for (let i = 2; i < polls.length; i++) {
      assert.ok(polls[i]!.t - polls[i - 1]!.t >= 900, `poll ${i} came ${polls[i]!.t - polls[i - 1]!.t} ms after the previous one (pollIntervalMs 1000)`);
    }
    const inline = completed['result'] as Json;
    assert.equal(inline['isError'], false);
    const run = (inline['structuredContent'] as Json)['result'] as Json;
    assert.equal(run['run_id'], taskId);
    assert.equal(run['result'], NESTED_REPLY);
    assert.equal(run['cleanup_confirmed'], true);
    assert.equal(requests.some((m) => m.msg['method'] === 'tasks/cancel'), false);

    // The model was told at once that the call moved to the background, then woken with the result.
    const backgrounded = fake.requests.find((r) => r.path === '/v1/messages' && lastToolResult(r.body)?.text.includes(taskId) === true && !isWake(r));
    assert.ok(backgrounded, 'a model request carried the "moved to the background" tool result');
    assert.match(lastToolResult(backgrounded.body)!.text, /moved to the background/);
    const wakeText = newest(wake);
    assert.ok(wakeText.includes(`MCP task ${taskId}`), 'the wake-up names the server task');
    assert.ok(wakeText.includes(NESTED_REPLY), 'the wake-up carries the run result');

    // /exit: nothing is running any more, so the CLI exits at once and ends the server with a signal.
    tmux('send-keys', '-t', 'host', '-l', '/exit');
    tmux('send-keys', '-t', 'host', 'Enter');
    const exit = await until(`the server to exit (screen:\n${screen()})`, () => wire().find((e) => e.exit !== undefined));
    assert.deepEqual({ exit: exit.exit, signal: exit.signal }, { exit: 0, signal: null }, 'the server exited 0 on its own');
    assert.deepEqual(describeProcesses(await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS)), [], 'nothing left after /exit');
  });
});
