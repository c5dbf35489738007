/**
 * End-to-end demo through the official MCP SDK client over stdio:
 *   1. claude.run (synchronous) with a progress bar fed by notifications/progress;
 *   2. claude.run.start, then the answer streamed live by paging claude.run.events, then the result;
 *   3. claude.run.start + claude.run.cancel mid-stream: the supervisor's ladder ends the run;
 *   then cleanup confirmation: every result's cleanup_confirmed, the adapter's exit on stdin EOF and,
 *   with the fake CLI, an independent look at the process table.
 * Default: the bundled fake CLI (fixtures/fake-claude.mjs, scenario "demo"): no Claude Code, no account.
 *   npm run demo -- --real      the real `claude` found on PATH (under npm, node_modules/.bin comes first,
 *                               so that is the pinned devDependency); needs a logged-in account or API key
 *   npm run demo -- --bundle    serve from dist/claude-run-mcp.cjs (after `npm run build`) instead of lib/
 *   npm run demo -- "a prompt"  your own prompt
 * Exits 0 only when every run's cleanup was confirmed and the adapter exited by itself.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

type Json = Record<string, unknown>;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const real = args.includes('--real');
const fromBundle = args.includes('--bundle');
const prompt = args.filter((a) => !a.startsWith('--')).join(' ') || 'Say hello and name three prime numbers.';
const tty = process.stdout.isTTY === true;
const BAR_WIDTH = 30;
const RUN_TIMEOUT_SECONDS = 300;
const POLL_MS = 100;

const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};
const bold = (text: string): string => (tty ? `\x1b[1m${text}\x1b[0m` : text);
const dim = (text: string): string => (tty ? `\x1b[2m${text}\x1b[0m` : text);
const structured = (r: CallToolResult): Json => ((r.structuredContent as Json | undefined)?.['result'] as Json | undefined) ?? {};

const work = realpathSync(mkdtempSync(join(tmpdir(), 'claude-run-mcp-demo-')));
const readyFile = join(work, 'native-pids.jsonl');
const env: Record<string, string> = {};
for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
if (!real) {
  env['FAKE_CLAUDE_SCENARIO'] = 'demo';
  env['FAKE_CLAUDE_READY_FILE'] = readyFile;
}
const bundle = join(ROOT, 'dist', 'claude-run-mcp.cjs');
if (fromBundle && !existsSync(bundle)) {
  process.stderr.write('demo: dist/claude-run-mcp.cjs is missing; run `npm run build` first\n');
  process.exit(2);
}
const serverArgs = fromBundle ? [bundle] : ['--import', 'tsx', join(ROOT, 'lib', 'main.ts')];
if (!real) serverArgs.push('--claude-bin', join(ROOT, 'fixtures', 'fake-claude.mjs'));

const transport = new StdioClientTransport({ command: process.execPath, args: serverArgs, env, stderr: 'pipe', cwd: ROOT });
let serverLog = '';
transport.stderr?.on('data', (chunk: Buffer) => {
  serverLog = (serverLog + chunk.toString('utf8')).slice(-4000);
});
const client = new Client({ name: 'claude-run-mcp-demo', version: '1.0.0' });
const problems: string[] = [];

try {
  await client.connect(transport);
  const serverPid = transport.pid;
  const info = client.getServerVersion();
  const { tools } = await client.listTools();
  const caps = JSON.parse(((await client.readResource({ uri: 'claude-run://capabilities' })).contents[0] as { text: string }).text) as {
    native: Json;
  };
  out(
    bold(`claude-run-mcp demo`) +
      dim(` (${real ? 'real claude on PATH: needs an account' : 'bundled fake CLI: no Claude Code or account needed'})`),
  );
  out(`server   ${info?.name} ${info?.version} over stdio, ${fromBundle ? 'dist bundle' : 'from lib/'}, pid ${serverPid ?? '?'}`);
  out(`native   ${String(caps.native['binary'] ?? caps.native['binary_error'])} (tested version ${String(caps.native['tested_version'])})`);
  out(`tools    ${tools.map((t) => t.name).join(', ')}`);
  out(`cwd      ${work}`);

  // 1. Synchronous run with progress.
  out();
  out(bold('1. claude.run') + dim('  synchronous; notifications/progress drive the bar'));
  out(`   prompt: ${prompt}`);
  let events = 0;
  let lastMessage = '';
  const started = performance.now();
  const drawBar = (done: boolean): void => {
    const filled = done ? BAR_WIDTH : Math.min(BAR_WIDTH - 1, events);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
    const line = `   ${bar} ${String(events).padStart(3)} events ${((performance.now() - started) / 1000).toFixed(1)}s  ${lastMessage.slice(0, 48)}`;
    // In a terminal the bar redraws one line, so it must not wrap.
    process.stdout.write(tty ? `\r\x1b[2K${line.slice(0, (process.stdout.columns || 80) - 1)}` : `${line}\n`);
  };
  const sync = (await client.callTool(
    { name: 'claude.run', arguments: { prompt, cwd: work, timeout_seconds: RUN_TIMEOUT_SECONDS } },
    CallToolResultSchema,
    {
      timeout: (RUN_TIMEOUT_SECONDS + 30) * 1000,
      onprogress: (p) => {
        events = p.progress;
        lastMessage = p.message ?? '';
        drawBar(false);
      },
    },
  )) as CallToolResult;
  lastMessage = sync.isError ? 'failed' : 'done';
  drawBar(true);
  if (tty) out();
  showResult(structured(sync), sync.isError === true);
  if (sync.isError === true) {
    const code = (structured(sync)['error'] as { code?: string } | null)?.code;
    if (code === 'authentication_failed') out('   hint: log in once with `claude` (or set ANTHROPIC_API_KEY), then run the demo again');
    out(dim('   the first run failed, so the demo skips the detached and cancel acts'));
  } else {
    await detachedActs();
  }

  // Cleanup confirmation.
  out();
  out(bold('cleanup'));
  const closing = performance.now();
  await client.close();
  const closeMs = Math.round(performance.now() - closing);
  const serverGone = serverPid !== null && serverPid !== undefined && !existsSync(`/proc/${serverPid}`);
  out(`   adapter: stdin closed, process ${serverGone ? 'exited' : 'still present'} after ${closeMs} ms`);
  if (!serverGone || closeMs >= 2000) problems.push('the adapter did not exit by itself on stdin EOF');
  if (!real) {
    const pids = nativePids();
    const alive = pids.filter((pid) => existsSync(`/proc/${pid}`));
    out(
      `   process table: ${pids.length} native process(es) started, ${alive.length} still running${alive.length > 0 ? ` (${alive.join(', ')})` : ''}`,
    );
    if (pids.length !== 3 || alive.length > 0)
      problems.push(`expected 3 native processes, all gone (started ${pids.length}, alive ${alive.length})`);
  }
} catch (error) {
  problems.push(error instanceof Error ? error.message : String(error));
  await client.close().catch(() => {});
} finally {
  rmSync(work, { recursive: true, force: true });
}

if (problems.length > 0) {
  out();
  out(`demo: FAILED: ${problems.join('; ')}`);
  if (serverLog !== '') out(dim(`server stderr (tail):\n${serverLog}`));
  process.exitCode = 1;
} else {
  out(`   every run reported cleanup_confirmed: true; nothing the demo started is left running.`);
}

/** Acts 2 and 3: a detached run streamed from its event pages, then a run cancelled mid-stream. */
async function detachedActs(): Promise<void> {
  // 2. Detached run: stream the answer by paging the run's events.
  out();
  out(bold('2. claude.run.start + claude.run.events') + dim('  detached; the answer streams from the event pages'));
  const detachedRun = structured(
    (await client.callTool({
      name: 'claude.run.start',
      arguments: { prompt: 'Count to five.', cwd: work, timeout_seconds: RUN_TIMEOUT_SECONDS },
    })) as CallToolResult,
  );
  const runId = String(detachedRun['run_id']);
  out(`   run_id ${runId} (${String(detachedRun['state'])})`);
  process.stdout.write('   > ');
  const pages = await streamEvents(runId);
  out();
  out(dim(`   ${pages.pages} event page(s), ${pages.events} events, missed ${pages.missed}`));
  const settled = (await client.callTool(
    { name: 'claude.run.result', arguments: { run_id: runId, wait_seconds: 30 } },
    CallToolResultSchema,
    { timeout: 60_000 },
  )) as CallToolResult;
  showResult(structured(settled), settled.isError === true);
  const listed = structured((await client.callTool({ name: 'claude.run.list', arguments: {} })) as CallToolResult);
  out(`   claude.run.list: ${String(listed['retained'])} retained, ${String(listed['active'])} active`);
  const released = (await client.callTool({ name: 'claude.run.release', arguments: { run_id: runId } })) as CallToolResult;
  out(`   claude.run.release: ${released.isError ? `refused (${firstLine(released)})` : 'released (the saved conversation is untouched)'}`);

  // 3. Cancellation mid-stream.
  out();
  out(bold('3. claude.run.cancel') + dim('  mid-stream; the supervisor sends SIGINT, then SIGTERM/SIGKILL if needed'));
  const victim = String(
    structured(
      (await client.callTool({
        name: 'claude.run.start',
        arguments: { prompt: 'Write a long story.', cwd: work, timeout_seconds: RUN_TIMEOUT_SECONDS },
      })) as CallToolResult,
    )['run_id'],
  );
  const seen = await waitForEvents(victim, 3);
  const cancel = structured((await client.callTool({ name: 'claude.run.cancel', arguments: { run_id: victim } })) as CallToolResult);
  out(`   cancel after ${seen} events: ${cancel['cancel_requested'] === true ? 'requested' : 'the run had already completed'}`);
  const cancelled = (await client.callTool(
    { name: 'claude.run.result', arguments: { run_id: victim, wait_seconds: 30 } },
    CallToolResultSchema,
    { timeout: 60_000 },
  )) as CallToolResult;
  const cancelledRun = structured(cancelled);
  showResult(cancelledRun, cancelled.isError === true);
  if (cancelledRun['completed'] !== true) problems.push('the cancelled run did not settle within 30 s');
}

function showResult(r: Json, isError: boolean): void {
  const error = r['error'] as { code?: string; message?: string } | null;
  out(`   state ${String(r['state'])}  ${isError ? `ERROR ${error?.code ?? '?'}: ${String(error?.message ?? '').slice(0, 120)}` : 'ok'}`);
  if (typeof r['result'] === 'string') out(`   result: ${(r['result'] as string).replace(/\s+/g, ' ').slice(0, 160)}`);
  const resume = r['resume'] as { resume_session_id?: string } | null;
  out(
    dim(
      `   session ${String(r['session_id'])}  model ${String(r['model'])}  turns ${String(r['num_turns'])}  cost $${String(r['total_cost_usd'])} (conversation)${resume ? '  continue with resume_session_id' : ''}`,
    ),
  );
  out(`   cleanup_confirmed: ${String(r['cleanup_confirmed'])}${r['cleanup_error'] ? ` (${JSON.stringify(r['cleanup_error'])})` : ''}`);
  if (r['cleanup_confirmed'] !== true) problems.push(`run ${String(r['run_id'])}: cleanup not confirmed`);
  if (error?.code !== 'cancelled' && isError) problems.push(`run ${String(r['run_id'])} failed: ${error?.code ?? 'unknown'}`);
}

/** Pages a run's events until it settled and nothing more is retained; prints text deltas as they come. */
async function streamEvents(runId: string): Promise<{ pages: number; events: number; missed: number }> {
  let cursor: string | undefined;
  const totals = { pages: 0, events: 0, missed: 0 };
  const deadline = performance.now() + RUN_TIMEOUT_SECONDS * 1000;
  while (performance.now() < deadline) {
    const page = structured(
      (await client.callTool({
        name: 'claude.run.events',
        arguments: { run_id: runId, limit: 100, ...(cursor ? { cursor } : {}) },
      })) as CallToolResult,
    );
    const list = (page['events'] as Array<{ event: Json }> | undefined) ?? [];
    totals.pages += 1;
    totals.events += list.length;
    totals.missed += Number(page['missed_events'] ?? 0);
    for (const { event } of list) {
      const delta = (event['event'] as Json | undefined)?.['delta'] as Json | undefined;
      if (event['type'] === 'stream_event' && delta?.['type'] === 'text_delta')
        process.stdout.write(String(delta['text']).replace(/\n/g, '\n     '));
    }
    cursor = typeof page['next_cursor'] === 'string' ? page['next_cursor'] : cursor;
    if (page['has_more'] === true) continue;
    if (page['completed'] === true) return totals;
    await sleep(POLL_MS);
  }
  problems.push(`run ${runId} did not finish streaming within ${RUN_TIMEOUT_SECONDS} s`);
  return totals;
}

/** Waits (bounded) until a run has produced at least `count` events or settled; returns the count seen. */
async function waitForEvents(runId: string, count: number): Promise<number> {
  const deadline = performance.now() + RUN_TIMEOUT_SECONDS * 1000;
  for (;;) {
    const page = structured(
      (await client.callTool({ name: 'claude.run.events', arguments: { run_id: runId, limit: 1 } })) as CallToolResult,
    );
    const total = Number(page['events_total'] ?? 0);
    if (total >= count || page['completed'] === true || performance.now() > deadline) return total;
    await sleep(20);
  }
}

function nativePids(): number[] {
  if (!existsSync(readyFile)) return [];
  const lines = readFileSync(readyFile, 'utf8').split('\n').slice(0, -1);
  return [
    ...new Set(
      lines
        .map((l) => JSON.parse(l) as { ready?: string; pid?: number })
        .filter((l) => l.ready === 'native' && typeof l.pid === 'number')
        .map((l) => l.pid as number),
    ),
  ];
}

function firstLine(r: CallToolResult): string {
  const first = r.content[0];
  return first?.type === 'text' ? (first.text.split('\n')[0] ?? '') : '';
}
