/**
 * Benchmark 5: responsiveness under load. Four runs flood stream-json at full speed while one client polls
 * claude.run.events, claude.run.result, ping and tasks/get back to back (one request in flight at a time),
 * from the moment all four stream until all four completed. Latency is the client's round trip. The four
 * runs are started as MCP tasks (a 2026-07-28 claude.run whose request declares the tasks extension) on the
 * same legacy-initialized process: a task is a run, so the events/result polls read them like any run, and
 * tasks/get is what Claude Code polls for a task's whole life.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { MAX_ACTIVE_RUNS } from '../../lib/runs/registry.ts';
import { startInitialized, toolResult } from './rpc-client.ts';
import { percentile } from './stats.ts';

export interface ResponsivenessResult {
  readonly pollP50Ms: number;
  readonly pollP99Ms: number;
  readonly pingP50Ms: number;
  readonly pingP99Ms: number;
  readonly taskGetP50Ms: number;
  readonly taskGetP99Ms: number;
  readonly polls: number;
  readonly pings: number;
  readonly taskGets: number;
}

/** The per-request _meta of a task-capable 2026-07-28 client (Claude Code's interactive mode). */
const TASK_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

/** Pause between requests so the client measures latency rather than saturating the server itself. */
const GAP_MS = 2;

export async function benchResponsiveness(options: {
  bundle: string;
  native: string;
  env: NodeJS.ProcessEnv;
  dir: string;
  floodMs: number;
}): Promise<ResponsivenessResult> {
  const server = await startInitialized(process.execPath, [options.bundle, '--claude-bin', options.native], {
    env: options.env,
    cwd: options.dir,
  });
  const polls: number[] = [];
  const pings: number[] = [];
  const taskGets: number[] = [];
  try {
    const started = await Promise.all(
      Array.from({ length: MAX_ACTIVE_RUNS }, () =>
        server.request('tools/call', { name: 'claude.run', arguments: { prompt: `timed:${options.floodMs}` }, _meta: TASK_META }),
      ),
    );
    const ids = started.map(({ response }) => {
      const task = response['result'] as Record<string, unknown> | undefined;
      if (task?.['resultType'] !== 'task') throw new Error(`claude.run did not return a task: ${JSON.stringify(response).slice(0, 500)}`);
      return String(task['taskId']);
    });
    // Measured once all four stream: the version checks and supervisor boots before that are not flood load.
    for (let streaming = 0; streaming < ids.length;) {
      streaming = 0;
      for (const id of ids) {
        const { result } = toolResult(
          (await server.request('tools/call', { name: 'claude.run.result', arguments: { run_id: id } })).response,
        );
        if (result['state'] === 'running') streaming++;
        else if (result['completed'] === true) throw new Error(`run ${id} ended before all four streamed; raise floodMs`);
      }
      await delay(GAP_MS);
    }
    const cursors = new Map<string, string | undefined>();
    let running = ids.length;
    for (let i = 0; running > 0; i++) {
      const runId = ids[i % ids.length] as string;
      const cursor = cursors.get(runId);
      const events = await server.request('tools/call', {
        name: 'claude.run.events',
        arguments: { run_id: runId, limit: 50, ...(cursor ? { cursor } : {}) },
      });
      cursors.set(runId, String(toolResult(events.response).result['next_cursor']));
      polls.push(events.ms);
      await delay(GAP_MS);
      const result = await server.request('tools/call', { name: 'claude.run.result', arguments: { run_id: runId } });
      polls.push(result.ms);
      await delay(GAP_MS);
      const ping = await server.request('ping');
      pings.push(ping.ms);
      await delay(GAP_MS);
      const task = await server.request('tasks/get', { taskId: runId, _meta: TASK_META });
      if ((task.response['result'] as Record<string, unknown> | undefined)?.['taskId'] !== runId)
        throw new Error(`tasks/get failed: ${JSON.stringify(task.response).slice(0, 500)}`);
      taskGets.push(task.ms);
      await delay(GAP_MS);
      if (i % ids.length === ids.length - 1) {
        running = 0;
        for (const id of ids) {
          const { result: r } = toolResult(
            (await server.request('tools/call', { name: 'claude.run.result', arguments: { run_id: id } })).response,
          );
          if (r['completed'] !== true) running++;
        }
      }
    }
  } finally {
    await server.close();
  }
  return {
    pollP50Ms: percentile(polls, 50),
    pollP99Ms: percentile(polls, 99),
    pingP50Ms: percentile(pings, 50),
    pingP99Ms: percentile(pings, 99),
    polls: polls.length,
    taskGetP50Ms: percentile(taskGets, 50),
    taskGetP99Ms: percentile(taskGets, 99),
    pings: pings.length,
    taskGets: taskGets.length,
  };
}
