// An in-process adapter over the real tool providers, driving the fake native CLI through real supervisors.
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAdapter, type Adapter } from '../../lib/adapter.ts';
import { createProviders, type ProviderConfig, type ToolProviders } from '../../lib/tools/providers.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import { pollUntil } from './poll.ts';
import { specSupervision } from './bundle.ts';
import { arr, firstText, isJsonObject, num, obj, objs, parseObj, rpcResult, str, toolBody } from './typed-results.ts';
import { TOOL_ERROR_CODES, type ToolErrorCode, type ToolErrorData } from '../../lib/tool-errors.ts';

export const FAKE_CLAUDE = fileURLToPath(new URL('../../fixtures/fake-claude.mjs', import.meta.url));

export interface ToolHarness {
  readonly adapter: Adapter;
  readonly providers: ToolProviders;
  readonly dir: string;
  readonly notifications: JsonObject[];
  call(name: string, args: JsonObject, meta?: JsonObject, id?: number): Promise<ToolCallResult>;
  request(method: string, params?: JsonObject): Promise<JsonObject>;
  /** Long-polls claude.run.result (`waitSeconds` per call) until the run is completed; rejects past `timeoutMs`. */
  settled(
    runId: string,
    options?: { waitSeconds?: number; timeoutMs?: number; detail?: 'summary' | 'full' },
  ): Promise<ToolCallResult & { readonly result: JsonObject }>;
  /** The whole result object of a run (claude.run.result with detail "full"). */
  full(runId: unknown): Promise<JsonObject>;
  close(): Promise<void>;
}

export interface ToolCallResult {
  readonly isError: boolean;
  readonly result: JsonObject | null;
  /** Typed, and checked to be a stable tool error (known code, message, optional JSON pointer path). */
  readonly error: ToolErrorData | null;
  readonly text: string;
}

let nextId = 1;

export async function createToolHarness(
  options: { env?: Record<string, string>; config?: Partial<ProviderConfig>; protocolVersion?: string } = {},
): Promise<ToolHarness> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-tools-')));
  const env: Record<string, string> = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, ...options.env };
  const providers = createProviders({
    claudeBin: FAKE_CLAUDE,
    maxTimeoutSeconds: 1800,
    underscoreNames: false,
    promptViaStdin: false,
    env,
    cwd: dir,
    // Supervisors from the run's spec bundle when there is one (they start in a third of the time).
    supervision: { interruptGraceMs: 1000, termGraceMs: 500, killGraceMs: 500, trackIntervalMs: 50, ...specSupervision() },
    ...options.config,
  });
  const adapter = createAdapter({
    toolProvider: providers.toolProvider,
    resourceProvider: providers.resourceProvider,
    onClose: providers.close,
  });
  const notifications: JsonObject[] = [];
  adapter.onNotification((n) => notifications.push(n));
  const request = async (method: string, params?: JsonObject): Promise<JsonObject> => {
    const id = nextId++;
    return obj(await adapter.handle({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) }), `${method} response`);
  };
  await request('initialize', {
    protocolVersion: options.protocolVersion ?? '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'spec', version: '0' },
  });
  await adapter.handle({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const harness: ToolHarness = {
    adapter,
    providers,
    dir,
    notifications,
    request,
    async call(name, args, meta, id) {
      const res = rpcResult(
        await adapter.handle({
          jsonrpc: '2.0',
          id: id ?? nextId++,
          method: 'tools/call',
          params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
        }),
      );
      const text = arr(res['content'], 'content').length === 0 ? '' : firstText(res);
      const body = toolBody(res);
      const result = body['result'] ?? null;
      return {
        isError: res['isError'] === true,
        result: result === null ? null : obj(result, 'structuredContent.result'),
        error: toolErrorOf(body['error'] ?? null),
        text,
      };
    },
    settled(runId, { waitSeconds = 10, timeoutMs = 60_000, detail = 'summary' } = {}) {
      return pollUntil(
        `run ${runId} to complete`,
        async () => {
          const out = await harness.call('claude.run.result', { run_id: runId, wait_seconds: waitSeconds, detail });
          return out.result?.['completed'] === true && { ...out, result: out.result };
        },
        { timeoutMs, intervalMs: 0 },
      );
    },
    async full(runId) {
      const out = await harness.call('claude.run.result', { run_id: String(runId), detail: 'full' });
      if (out.result === null) throw new Error(`no full result: ${out.text}`);
      return out.result;
    },
    async close() {
      await adapter.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** The error member of a tool result, checked to be ToolErrorData; throws on anything off that shape. */
export function toolErrorOf(value: unknown): ToolErrorData | null {
  if (value === null || value === undefined) return null;
  if (!isJsonObject(value)) throw new Error(`tool error is not an object: ${JSON.stringify(value)}`);
  const { code, message, path } = value;
  if (typeof code !== 'string' || !isToolErrorCode(code)) throw new Error(`unknown tool error code: ${JSON.stringify(code)}`);
  if (typeof message !== 'string') throw new Error(`tool error without a message: ${JSON.stringify(value)}`);
  if (path !== undefined && typeof path !== 'string') throw new Error(`tool error path is not a string: ${JSON.stringify(value)}`);
  return path === undefined ? { code, message } : { code, message, path };
}

const isToolErrorCode = (code: string): code is ToolErrorCode => Object.hasOwn(TOOL_ERROR_CODES, code);

/** What the fake CLI records of its process (FAKE_CLAUDE_RECORD; FAKE_CLAUDE_RECORD_DIR files lack stdin and fds). */
export interface FakeRecord {
  readonly argv: string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
  readonly stdin?: string | null;
  readonly fds?: Array<{ readonly fd: number; readonly target: string; readonly cloexec: boolean | null }>;
}

/** The record files in a FAKE_CLAUDE_RECORD_DIR folder (paths), without a record still being written. */
export function recordFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
    .map((name) => join(dir, name));
}

/** Reads and checks one record file of the fake CLI. */
export function readFakeRecord(file: string): FakeRecord {
  const raw = parseObj(readFileSync(file, 'utf8'), `fake record ${file}`);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(obj(raw['env'], 'record env'))) env[key] = str(value, `record env.${key}`);
  const record = {
    argv: arr(raw['argv'], 'record argv').map((a, i) => str(a, `record argv[${i}]`)),
    env,
    cwd: str(raw['cwd'], 'record cwd'),
  };
  const stdin = raw['stdin'];
  const fds =
    raw['fds'] === undefined
      ? undefined
      : objs(raw['fds'], 'record fds').map((f, i) => {
          const cloexec = f['cloexec'];
          if (cloexec !== null && typeof cloexec !== 'boolean') throw new Error(`record fds[${i}].cloexec: ${JSON.stringify(cloexec)}`);
          return { fd: num(f['fd'], `record fds[${i}].fd`), target: str(f['target'], `record fds[${i}].target`), cloexec };
        });
  return {
    ...record,
    ...(stdin === undefined ? {} : { stdin: stdin === null ? null : str(stdin, 'record stdin') }),
    ...(fds === undefined ? {} : { fds }),
  };
}
