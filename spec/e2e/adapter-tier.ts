/**
 * The adapter-level native tier: one real adapter process (the spec bundle, or lib/main.ts under tsx, with
 * `--claude-bin <pinned claude>`) per test file, driven through the official MCP SDK client, running the real binary
 * against the loopback fake API. The adapter's environment is a native sandbox (own HOME and TMPDIR,
 * traffic off, no retries), so every run it starts is isolated the same way. Each test gets its own
 * working directory; runs pick their fake scenario with a prompt tag (one process = one environment).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { ClientCapabilities, Progress } from '@modelcontextprotocol/sdk/types.js';
import { scenarioByPromptTag, startFakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import type { FakeAnthropic, RecordedRequest, Scenario } from '../../fixtures/fake-anthropic/server.ts';
import { readProcStat, readProcTable } from '../../lib/process/proc-table.ts';
import { encodeProjectPath } from '../../lib/native/transcripts.ts';
import { createNativeSandbox, pollUntilGone, realClaudeBin } from '../helpers/native-env.ts';
import type { NativeSandbox, SandboxProcess } from '../helpers/native-env.ts';
import { pollUntil } from '../helpers/poll.ts';
import { isJsonObject, lookup } from '../helpers/typed-results.ts';
import { toolErrorOf } from '../helpers/tool-harness.ts';
import { serverNodeArgs } from '../helpers/bundle.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import type { ToolErrorData } from '../../lib/tool-errors.ts';

/** A fake turn takes ~1-2 s through the adapter; only a hung run gets near this. */
export const CALL_TIMEOUT_MS = 60_000;
/** A settled run's processes are already gone; this only absorbs /proc lag. */
export const LEAK_POLL_MS = 5_000;

export interface TierOptions {
  /** Named scenarios for prompt tags (presets are always available). */
  readonly scenarios?: Readonly<Record<string, Scenario>>;
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** Capabilities the SDK client declares at initialize (e.g. elicitation). */
  readonly clientCapabilities?: ClientCapabilities;
  /** Server options after --claude-bin (e.g. --budget-usd). */
  readonly serverArgs?: readonly string[];
}

/** What tools/call returned, as the SDK parsed it. */
export interface CallOutcome {
  readonly isError: boolean;
  readonly result: JsonObject;
  /** Checked to be a stable tool error (known code, message, optional path). */
  readonly error: ToolErrorData | null;
  readonly progress: readonly Progress[];
}

export interface AdapterTier {
  readonly fake: FakeAnthropic;
  readonly sandbox: NativeSandbox;
  readonly client: Client;
  readonly serverPid: number;
  /** Calls a tool with a progress token; structuredContent unpacked. */
  call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallOutcome>;
  /** The whole result object of a run (claude.run.result with detail "full"). */
  full(runId: unknown): Promise<JsonObject>;
  /** A fresh working directory for one test (realpath); removed with its transcripts by `dropCwd`. */
  newCwd(): Promise<string>;
  dropCwd(cwd: string): Promise<void>;
  /** Where the CLI keeps transcripts of `cwd` inside the sandbox HOME. */
  projectDir(cwd: string): string;
  /** Transcript ids (file names without .jsonl) saved for `cwd`. */
  transcripts(cwd: string): Promise<string[]>;
  /** Live sandbox processes other than the adapter itself (native runs, supervisors, tools). */
  strays(): Promise<SandboxProcess[]>;
  /** /v1/messages calls that carry `marker` in their newest user text. */
  callsWith(marker: string): RecordedRequest[];
  /** Cancels every unsettled run and waits for each to settle (cleanup after a failed test). */
  settleAll(): Promise<void>;
  /** Closes the client (the adapter exits on stdin EOF), the fake and the sandbox; asserts nothing survived. */
  close(): Promise<void>;
}

export async function startAdapterTier(options: TierOptions = {}): Promise<AdapterTier> {
  const fake = await startFakeAnthropic({ scenario: scenarioByPromptTag(options.scenarios ?? {}) });
  const sandbox = await createNativeSandbox({ baseUrl: fake.url, ...(options.extraEnv ? { extraEnv: options.extraEnv } : {}) });
  await mkdir(join(sandbox.root, 'cwds'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...serverNodeArgs(), '--claude-bin', realClaudeBin(), ...(options.serverArgs ?? [])],
    cwd: sandbox.cwd,
    env: sandbox.env,
    stderr: 'pipe',
  });
  let serverLog = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    serverLog += chunk.toString('utf8');
  });
  const client = new Client(
    { name: 'native-tier', version: '1.0.0' },
    options.clientCapabilities ? { capabilities: options.clientCapabilities } : undefined,
  );
  try {
    await client.connect(transport);
  } catch (error) {
    await Promise.allSettled([transport.close(), fake.close()]);
    await sandbox.cleanup();
    throw new Error(`adapter did not start: ${String(error)}; stderr: ${serverLog}`);
  }
  const serverPid = transport.pid;
  assert.ok(serverPid !== null, 'the adapter process has a pid');
  let seq = 0;

  const projectDir = (cwd: string): string => join(sandbox.home, '.claude', 'projects', encodeProjectPath(cwd));
  const tier: AdapterTier = {
    fake,
    sandbox,
    client,
    serverPid,
    async call(name, args, signal) {
      const progress: Progress[] = [];
      const answer = await client.callTool({ name, arguments: args }, undefined, {
        onprogress: (p) => {
          progress.push(p);
        },
        timeout: CALL_TIMEOUT_MS,
        ...(signal ? { signal } : {}),
      });
      const body: unknown = answer.structuredContent;
      const result = isJsonObject(body) ? body['result'] : undefined;
      if (!isJsonObject(body) || !isJsonObject(result))
        assert.fail(`${name}: structuredContent.result missing: ${JSON.stringify(answer).slice(0, 2000)}; adapter stderr: ${serverLog}`);
      return { isError: answer.isError === true, result, error: toolErrorOf(body['error']), progress };
    },
    async full(runId) {
      return (await tier.call('claude.run.result', { run_id: runId, detail: 'full' })).result;
    },
    async newCwd() {
      seq += 1;
      return realpath(await mkdtemp(join(sandbox.root, 'cwds', `t${seq}-`)));
    },
    async dropCwd(cwd) {
      await rm(cwd, { recursive: true, force: true });
      await rm(projectDir(cwd), { recursive: true, force: true });
      assert.equal(existsSync(cwd), false, 'test cwd removed');
    },
    projectDir,
    async transcripts(cwd) {
      const dir = projectDir(cwd);
      if (!existsSync(dir)) return [];
      return (await readdir(dir))
        .filter((name) => name.endsWith('.jsonl'))
        .map((name) => name.slice(0, -'.jsonl'.length))
        .sort();
    },
    async strays() {
      return (await sandbox.processes()).filter((p) => p.pid !== serverPid && !isServerHelper(p, serverPid));
    },
    callsWith(marker) {
      return fake.requests.filter((r) => r.path === '/v1/messages' && JSON.stringify(r.body).includes(marker));
    },
    async settleAll() {
      const listed = await client.callTool({ name: 'claude.run.list', arguments: {} });
      // Cleanup after a failed test: whatever the listing holds is read leniently (a broken listing cancels nothing).
      const runs = lookup(listed.structuredContent, 'result', 'runs');
      for (const run of Array.isArray(runs) ? runs.filter(isJsonObject).filter((r) => r['completed'] !== true) : []) {
        await client.callTool({ name: 'claude.run.cancel', arguments: { run_id: run['run_id'] } });
        await client.callTool({ name: 'claude.run.result', arguments: { run_id: run['run_id'], wait_seconds: 30 } }, undefined, {
          timeout: CALL_TIMEOUT_MS,
        });
      }
    },
    async close() {
      try {
        await client.close();
        const left = await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS);
        assert.deepEqual(describeProcesses(left), [], 'nothing the tier started survives the adapter');
      } finally {
        await fake.close();
        await sandbox.cleanup();
      }
      assert.equal(existsSync(sandbox.root), false, 'sandbox removed');
    },
  };
  return tier;
}

/** Runs `body` with a fresh cwd; afterwards asserts that no run process survived, and removes the cwd. */
export async function inCwd(tier: AdapterTier, body: (cwd: string) => Promise<void>): Promise<void> {
  const cwd = await tier.newCwd();
  let passed = false;
  try {
    await body(cwd);
    passed = true;
    const left = await pollUntilGone(() => tier.strays(), LEAK_POLL_MS);
    assert.deepEqual(describeProcesses(left), [], 'no native, supervisor or tool process left after the test');
  } finally {
    // A failed test may leave a run behind; end it so the next test starts clean.
    if (!passed) await tier.settleAll().catch(() => {});
    await tier.dropCwd(cwd);
  }
}

/**
 * The server's own helpers, which outlive a test by design: tsx's esbuild service (of the server, or of an
 * idle spare supervisor loading under tsx), and the idle spare supervisor (a supervisor child of the server
 * that runs nothing until a run takes it: nothing under it but that esbuild service). All must still be gone
 * after the server closes (`close` checks every sandbox process).
 */
function isServerHelper(p: SandboxProcess, serverPid: number): boolean {
  const ppid = readProcStat(p.pid)?.ppid;
  if (ppid === undefined) return false;
  if (isEsbuild(p.pid)) return ppid === serverPid || isIdleSpare(ppid, serverPid);
  return isIdleSpare(p.pid, serverPid);
}

function isEsbuild(pid: number): boolean {
  try {
    return basename(readlinkSync(`/proc/${pid}/exe`)) === 'esbuild';
  } catch {
    return false;
  }
}

function isIdleSpare(pid: number, serverPid: number): boolean {
  if (readProcStat(pid)?.ppid !== serverPid) return false;
  let cmdline: string[];
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return false;
  }
  if (!cmdline.some((arg) => arg.endsWith('lib/supervisor/child/main.ts') || arg === '__supervisor')) return false;
  return !readProcTable().some((q) => q.pid !== pid && (q.ppid === pid || q.sid === pid) && !isEsbuild(q.pid));
}

export function describeProcesses(processes: readonly SandboxProcess[]): string[] {
  return processes.map((p) => `${p.pid} ${p.cmdline.join(' ').slice(0, 200)}`);
}

/** Unique text for one test, so its fake calls can be told apart (`callsWith`). */
export function marker(label: string): string {
  return `${label}-${Math.random().toString(36).slice(2, 10)}`;
}

/** Polls a tool until `done` says so; hard deadline. */
export async function pollTool<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  return pollUntil(what, probe, { timeoutMs, intervalMs: 50 });
}
