// The real server over stdio (`node --import tsx lib/main.ts --claude-bin fixtures/fake-claude.mjs`)
// driven by the official MCP SDK client. HOME is a fresh temp folder (the fake keeps its sessions there)
// and the fake writes its timestamped ready lines to a file the spec reads.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MAIN, ROOT } from '../e2e/server-process.ts';
import { readFakeLines, type FakeLine } from '../sessions/helpers.ts';
import { obj, toolBody } from '../helpers/typed-results.ts';
import { toolErrorOf } from '../helpers/tool-harness.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import type { ToolErrorData } from '../../lib/tool-errors.ts';

export const WORK_INVOCATION = 'io.github.computer-mcp/work-invocation';

export interface Called {
  readonly isError: boolean;
  readonly result: JsonObject | null;
  /** Checked to be a stable tool error (known code, message, optional path). */
  readonly error: ToolErrorData | null;
}

export interface SdkServer {
  readonly client: Client;
  readonly dir: string;
  lines(): FakeLine[];
  /** tools/call through the SDK; `invocation` goes into _meta as the work-invocation UUID. */
  call(name: string, args: Record<string, unknown>, invocation?: string): Promise<Called>;
  /** Starts a detached run (tool name given for underscore servers) and returns its run_id. */
  start(args: Record<string, unknown>, invocation?: string, tool?: string): Promise<string>;
  /** claude.run.result with wait_seconds 30 until completed (hard deadline 120 s). */
  settled(runId: string, tool?: string): Promise<Called>;
  close(): Promise<void>;
}

export async function startSdkServer(options: { args?: string[]; env?: Record<string, string> } = {}): Promise<SdkServer> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-sdk-detached-')));
  const readyFile = join(dir, 'ready.jsonl');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...MAIN, '--claude-bin', 'fixtures/fake-claude.mjs', ...(options.args ?? [])],
    cwd: ROOT,
    env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: dir, FAKE_CLAUDE_READY_FILE: readyFile, ...options.env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'detached-spec', version: '1.0.0' });
  await client.connect(transport);

  const call = async (name: string, args: Record<string, unknown>, invocation?: string): Promise<Called> => {
    const res = await client.callTool({ name, arguments: args, ...(invocation ? { _meta: { [WORK_INVOCATION]: invocation } } : {}) });
    const body = toolBody(res);
    const result = body['result'] ?? null;
    return {
      isError: res.isError === true,
      result: result === null ? null : obj(result, `${name}: result`),
      error: toolErrorOf(body['error']),
    };
  };
  const settled = async (runId: string, tool = 'claude.run.result'): Promise<Called> => {
    for (let i = 0; i < 4; i++) {
      const out = await call(tool, { run_id: runId, wait_seconds: 30, detail: 'full' });
      if (out.result?.['completed'] === true) return out;
    }
    throw new Error(`run ${runId} did not settle`);
  };
  return {
    client,
    dir,
    lines: () => readFakeLines(readyFile),
    call,
    async start(args, invocation, tool = 'claude.run.start') {
      const out = await call(tool, { cwd: dir, ...args }, invocation);
      if (out.isError) throw new Error(`start failed: ${JSON.stringify(out.error)}`);
      return String(out.result?.['run_id']);
    },
    settled,
    async close() {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
