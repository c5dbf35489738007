/**
 * End-to-end demo through the official MCP SDK client: starts the adapter over stdio, runs one prompt
 * with progress, starts a detached run and pages its events, then shows cleanup confirmation.
 * By default the adapter drives the bundled fake CLI (no Claude Code, no account needed).
 * `npm run demo -- --real` uses the real `claude` on PATH instead (needs an account).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const root = fileURLToPath(new URL('..', import.meta.url));
const real = process.argv.includes('--real');
const prompt = process.argv.filter((a) => !a.startsWith('--')).slice(2).join(' ') || 'Say hello and name three prime numbers.';

const env: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
if (!real) env['FAKE_CLAUDE_SCENARIO'] = 'demo';
const serverArgs = ['--import', 'tsx', join(root, 'lib', 'main.ts')];
if (!real) serverArgs.push('--claude-bin', join(root, 'fixtures', 'fake-claude.mjs'));

const transport = new StdioClientTransport({ command: process.execPath, args: serverArgs, env, stderr: 'inherit', cwd: root });
const client = new Client({ name: 'claude-run-mcp-demo', version: '1.0.0' });
await client.connect(transport);
const info = client.getServerVersion();
out(`connected to ${info?.name} ${info?.version} (${real ? 'real claude on PATH' : 'bundled fake CLI'})`);
const { tools } = await client.listTools();
out(`tools: ${tools.map((t) => t.name).join(', ')}`);

out(`\n== claude.run (synchronous, with progress) ==\nprompt: ${prompt}`);
let ticks = 0;
const sync = await client.callTool(
  { name: 'claude.run', arguments: { prompt, cwd: tmpdir(), timeout_seconds: 300 } },
  CallToolResultSchema,
  {
    onprogress: (p) => {
      ticks += 1;
      const bar = '#'.repeat(Math.min(40, ticks));
      process.stdout.write(`\r[${bar.padEnd(40)}] ${String(p.progress).padStart(4)} ${(p.message ?? '').slice(0, 50).padEnd(50)}`);
    },
    timeout: 600_000,
  },
);
process.stdout.write('\n');
const result = (sync.structuredContent as { result?: Record<string, unknown> } | undefined)?.result ?? {};
show(result);

out('\n== claude.run.start + events + result (detached) ==');
const started = await client.callTool({ name: 'claude.run.start', arguments: { prompt: 'Count to five.', cwd: tmpdir() } });
const runId = ((started.structuredContent as { result?: { run_id?: string } }).result?.run_id) ?? '';
out(`run_id ${runId}`);
const settled = await client.callTool({ name: 'claude.run.result', arguments: { run_id: runId, wait_seconds: 30 } }, CallToolResultSchema, { timeout: 60_000 });
let cursor: string | undefined;
let pages = 0;
for (;;) {
  const page = await client.callTool({ name: 'claude.run.events', arguments: { run_id: runId, limit: 20, ...(cursor ? { cursor } : {}) } });
  const body = (page.structuredContent as { result: { events: Array<{ event: { type?: string; subtype?: string } }>; next_cursor: string; has_more: boolean } }).result;
  pages += 1;
  out(`page ${pages}: ${body.events.map((e) => e.event.subtype ? `${e.event.type}/${e.event.subtype}` : e.event.type).join(' ')}`);
  cursor = body.next_cursor;
  if (!body.has_more) break;
}
show((settled.structuredContent as { result?: Record<string, unknown> }).result ?? {});
const released = await client.callTool({ name: 'claude.run.release', arguments: { run_id: runId } });
out(`released: ${released.isError ? 'no' : 'yes'}`);
await client.close();
out('adapter closed; every process it started was reaped (cleanup_confirmed above).');

function show(r: Record<string, unknown>): void {
  out(`state ${r['state']}, is_error ${r['is_error']}, error ${JSON.stringify(r['error'])}`);
  out(`session_id ${r['session_id']}, model ${r['model']}, num_turns ${r['num_turns']}, total_cost_usd ${r['total_cost_usd']}`);
  out(`result: ${String(r['result'] ?? '').slice(0, 200)}`);
  out(`exit_code ${r['exit_code']}, cleanup_confirmed ${r['cleanup_confirmed']}, events ${r['events_total']} (dropped ${r['events_dropped']})`);
}
function out(line: string): void { process.stdout.write(`${line}\n`); }
