/**
 * Benchmark 6: progress latency. The native stand-in writes one text delta every few milliseconds, each
 * carrying its CLOCK_MONOTONIC write instant; the client stamps each notifications/progress on arrival.
 * Latency spans native pipe → supervisor relay → adapter ingest → progress writer → client.
 */
import { startInitialized, toolResult } from './rpc-client.ts';
import { percentile } from './stats.ts';

export interface ProgressLatencyResult {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly events: number;
  readonly intervalMs: number;
}

const INTERVAL_MS = 10;

export async function benchProgressLatency(options: {
  bundle: string;
  native: string;
  env: NodeJS.ProcessEnv;
  dir: string;
  events: number;
}): Promise<ProgressLatencyResult> {
  const server = await startInitialized(process.execPath, [options.bundle, '--claude-bin', options.native], {
    env: options.env,
    cwd: options.dir,
  });
  const latencies: number[] = [];
  server.onNotification((message, at) => {
    if (message['method'] !== 'notifications/progress') return;
    const text = String((message['params'] as Record<string, unknown> | undefined)?.['message'] ?? '');
    const stamp = /@(\d+\.\d+)@/.exec(text);
    if (stamp) latencies.push(at - Number(stamp[1]));
  });
  try {
    const { response } = await server.request('tools/call', {
      name: 'claude.run',
      arguments: { prompt: `paced:${options.events}:${INTERVAL_MS}` },
      _meta: { progressToken: 'bench' },
    });
    const { isError, result } = toolResult(response);
    if (isError) throw new Error(`paced run failed: ${JSON.stringify(result).slice(0, 500)}`);
  } finally {
    await server.close();
  }
  if (latencies.length !== options.events)
    throw new Error(`expected ${options.events} stamped progress notifications, got ${latencies.length}`);
  return {
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: Math.max(...latencies),
    events: latencies.length,
    intervalMs: INTERVAL_MS,
  };
}
