/**
 * The darwin-emulated tier's server: the spec bundle started as on a Mac, every file access of it and of all it
 * starts traced. `process.platform` and `os.platform()` read `darwin` in the server alone (the `--require`
 * preload; a supervisor is told the platform, never preloaded), `ps` is the BSD stand-in first on PATH, and the
 * whole tree runs under `strace -f`. After the server and everything traced have exited, the trace is judged
 * (spec/helpers/darwin-trace.ts). No strace: the spec fails, saying so (.ci/run installs it).
 *
 * strace arguments beyond `-f -e trace=%file`: `%process` shows each clone and execve, so every thread is
 * attributed to its process and program; `-y` names each descriptor's path (an `openat(fd, "stat")` relative to
 * a directory is read whole); `-s 4096` prints whole paths and argv; `--seccomp-bpf` stops the tracee only at
 * the traced calls; `-qq` and `-e signal=none` leave out notices that name no file.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type ServerProcess } from '../e2e/server-process.ts';
import { specBundle } from './bundle.ts';
import { judgeTrace, type TraceVerdict, type Violation } from './darwin-trace.ts';
import { readProcTable, waitFor } from './proc.ts';
import { parseStrace } from './strace.ts';
import { aliveNaming, killPids } from '../faults/escape-helpers.ts';
import { arr, firstText, obj, rpcResult, toolBody } from './typed-results.ts';
import type { JsonObject } from '../../lib/util/json.ts';

export const PRELOAD = fileURLToPath(new URL('../../fixtures/platform-preload.cjs', import.meta.url));
export const BSD_PS_DIR = fileURLToPath(new URL('../../fixtures/bsd-ps', import.meta.url));
export const FAKE_CLAUDE = fileURLToPath(new URL('../../fixtures/fake-claude.mjs', import.meta.url));
export const STRACE_ARGS = ['-f', '-qq', '--seccomp-bpf', '-y', '-s', '4096', '-e', 'signal=none', '-e', 'trace=%file,%process'];
/** A long-polled result call waits this long per request. */
const RESULT_WAIT_SECONDS = 20;

/** The strace binary's path; throws, naming how to install it, when there is none (the tier never skips). */
export function straceBinary(): string {
  const probe = spawnSync('strace', ['-V'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `the darwin-emulated tier needs strace (${probe.error?.message ?? `strace -V exited ${probe.status}`}): apt-get install strace (.ci/run installs it)`,
    );
  }
  return 'strace';
}

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
  /** The traced server's own pid (the strace child's child). */
  pid(): Promise<number>;
  call(name: string, args: JsonObject): Promise<ToolCall>;
  /** The whole result object of a run (claude.run.result, detail full). */
  full(runId: unknown): Promise<JsonObject>;
  /** Ends stdin, waits until strace (so every traced process) has exited, and judges the trace. */
  close(): Promise<TraceVerdict>;
}

let nextId = 1;

/** Starts the bundle as darwin under strace, initialized; `env` adds to the server's environment. */
export async function startDarwinServer(options: { args?: readonly string[]; env?: Record<string, string> } = {}): Promise<DarwinServer> {
  const strace = straceBinary();
  const bundle = await specBundle();
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-darwin-')));
  const traceFile = join(dir, 'strace.txt');
  const env = {
    ...process.env,
    PRELOAD_PLATFORM: 'darwin',
    PATH: `${BSD_PS_DIR}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
    HOME: dir,
    ...options.env,
  };
  const server = startServer(['--require', PRELOAD, bundle], ['--claude-bin', FAKE_CLAUDE, ...(options.args ?? [])], {
    env,
    wrap: [strace, ...STRACE_ARGS, '-o', traceFile],
  });
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
    traceFile,
    pid: () => waitFor('the traced server', () => readProcTable().find((s) => s.ppid === server.child.pid)?.pid),
    call,
    async full(runId) {
      const out = await call('claude.run.result', { run_id: String(runId), detail: 'full', wait_seconds: RESULT_WAIT_SECONDS });
      if (out.result === null) throw new Error(`no full result: ${out.text}`);
      return out.result;
    },
    async close() {
      server.child.stdin.end();
      await server.exited();
      const verdict = judgeTrace(parseStrace(readFileSync(traceFile, 'latin1')), { productScript: bundle, preload: PRELOAD });
      rmSync(dir, { recursive: true, force: true });
      return verdict;
    },
  };
}

/** One line per kind of forbidden access (process role, call, path shape, rule), with its count and first trace line. */
export function describeViolations(verdict: TraceVerdict): string {
  const kinds = new Map<string, { count: number; first: number }>();
  for (const v of verdict.violations) {
    const role = v.pid === verdict.rootPid ? 'server' : v.argv.includes('__supervisor') ? 'supervisor' : `pid ${v.pid}`;
    const key = `${role}: ${v.syscall} ${shape(v)} (${v.rule})`;
    const kind = kinds.get(key) ?? { count: 0, first: v.line };
    kinds.set(key, { count: kind.count + 1, first: kind.first });
  }
  return [...kinds].map(([key, k]) => `${k.count} × ${key}, first at trace line ${k.first}`).join('\n');
}

/** The path with numbers and run-specific names folded, so repeats group. */
function shape(v: Violation): string {
  return v.path.replace(/\/\d+(?=\/|$)/g, '/<n>').replace(/claude-run-mcp-[\w-]+/g, 'claude-run-mcp-<id>');
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
