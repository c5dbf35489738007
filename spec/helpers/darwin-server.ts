/**
 * The darwin-emulated tier's own server harness (spec/helpers/darwin-mode.ts says how the server runs as on a
 * Mac, traced): start it, call its tools, close it and get the trace's verdict. No strace: the spec fails,
 * saying so (.ci/run installs it).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type ServerProcess } from '../e2e/server-process.ts';
import { specBundle } from './bundle.ts';
import { assertStrace, darwinCommand, judgeTraceFile, PRELOAD } from './darwin-mode.ts';
import { describeViolations, type TraceVerdict } from './darwin-trace.ts';
import { arr, firstText, obj, rpcResult, toolBody } from './typed-results.ts';
import { aliveNaming, killPids } from '../faults/escape-helpers.ts';
import type { JsonObject } from '../../lib/util/json.ts';

export { describeViolations, PRELOAD };
export const FAKE_CLAUDE = fileURLToPath(new URL('../../fixtures/fake-claude.mjs', import.meta.url));
/** A long-polled result call waits this long per request. */
const RESULT_WAIT_SECONDS = 20;

export interface ToolCall {
  readonly isError: boolean;
  readonly result: JsonObject | null;
  readonly text: string;
}

export interface DarwinServer {
  readonly server: ServerProcess;
  /** A private directory: the server's HOME and the runs' cwd. */
  readonly dir: string;
  readonly traceFile: string;
  call(name: string, args: JsonObject): Promise<ToolCall>;
  /** The whole result object of a run (claude.run.result, detail full). */
  full(runId: unknown): Promise<JsonObject>;
  /** Ends stdin, waits until strace (so every traced process) has exited, and judges the trace. */
  close(): Promise<TraceVerdict>;
}

let nextId = 1;

/** Starts the bundle as darwin under strace, initialized; `env` adds to the server's environment. */
export async function startDarwinServer(options: { args?: readonly string[]; env?: Record<string, string> } = {}): Promise<DarwinServer> {
  assertStrace();
  const bundle = await specBundle();
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-darwin-')));
  const env = { ...process.env, HOME: dir, ...options.env };
  const launch = darwinCommand(bundle, ['--claude-bin', FAKE_CLAUDE, ...(options.args ?? [])], env, dir);
  const server = startServer(launch.args, [], { env: launch.env, command: launch.file });
  const request = async (method: string, params: JsonObject): Promise<JsonObject> => {
    const id = nextId++;
    server.send({ jsonrpc: '2.0', id, method, params });
    return rpcResult(await server.response(id, (RESULT_WAIT_SECONDS + 40) * 1000));
  };
  const call = async (name: string, args: JsonObject): Promise<ToolCall> => {
    const res = await request('tools/call', { name, arguments: args });
    const result = toolBody(res)['result'] ?? null;
    return {
      isError: res['isError'] === true,
      result: result === null ? null : obj(result, 'structuredContent.result'),
      text: arr(res['content'], 'content').length === 0 ? '' : firstText(res),
    };
  };
  await server.ready();
  await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '0' } });
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return {
    server,
    dir,
    traceFile: launch.traceFile,
    call,
    async full(runId) {
      const out = await call('claude.run.result', { run_id: String(runId), detail: 'full', wait_seconds: RESULT_WAIT_SECONDS });
      if (out.result === null) throw new Error(`no full result: ${out.text}`);
      return out.result;
    },
    async close() {
      server.child.stdin.end();
      await server.exited();
      const verdict = await judgeTraceFile(launch.traceFile, bundle);
      rmSync(dir, { recursive: true, force: true });
      return verdict;
    },
  };
}

/**
 * Runs `use` against a darwin server whose fake CLI gets `env` plus a private ready file (each escapee names it
 * in its argv), then ends whatever still names that file (strace waits for every tracee), closes the server
 * and returns the trace's verdict beside `use`'s value. A throw from `use` is rethrown after all of that.
 */
export async function withDarwinServer<T>(
  env: Record<string, string>,
  use: (darwin: DarwinServer, ready: string) => Promise<T>,
  options: { args?: readonly string[] } = {},
): Promise<{ value: T; verdict: TraceVerdict }> {
  const scratch = mkdtempSync(join(tmpdir(), 'crm-darwin-ready-'));
  const ready = join(scratch, 'ready.jsonl');
  try {
    const darwin = await startDarwinServer({ env: { ...env, FAKE_CLAUDE_READY_FILE: ready }, ...options });
    let outcome: { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };
    try {
      outcome = { ok: true, value: await use(darwin, ready) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    killPids(aliveNaming(ready));
    const verdict = await darwin.close();
    if (!outcome.ok) throw outcome.error;
    return { value: outcome.value, verdict };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The trace is whole and clean: every line read, every thread attributed, the server preloaded and no
 * supervisor, at least one supervisor traced, and no forbidden access (each kind listed when there is one).
 */
export function assertDarwinTrace(verdict: TraceVerdict): void {
  assert.deepEqual(verdict.unread.slice(0, 5), [], 'every trace line read');
  assert.deepEqual(verdict.unattributed, [], 'every thread attributed to a process');
  assert.ok(verdict.rootArgv.includes(PRELOAD), `the server ran preloaded: ${JSON.stringify(verdict.rootArgv)}`);
  const supervisors = verdict.products.filter((p) => p.pid !== verdict.rootPid);
  assert.ok(supervisors.length >= 1, 'at least one supervisor traced');
  for (const s of supervisors) {
    assert.ok(s.argv.includes('__supervisor') && !s.argv.includes(PRELOAD), `a supervisor, not preloaded: ${JSON.stringify(s.argv)}`);
  }
  assert.equal(verdict.violations.length, 0, `forbidden on darwin:\n${describeViolations(verdict)}`);
}
