/**
 * Benchmark 4: memory. A fresh bundled server is measured idle (after the handshake and one tools/list),
 * then filled with 32 retained runs each at the full event bound (256 events / 256 KiB) and the full final
 * bound (a final event just under 128 KiB), then 4 floods run at once (each evicting one retained run and
 * ending at the same bounds). The peak is the kernel's high-water mark (VmHWM, reset after the idle read).
 * Beside it, a probe process runs the same providers with --expose-gc and reads the live heap after full
 * collections: what is really retained, apart from the heap room V8 keeps after allocation bursts.
 * And the same sequence once more on a fresh server with empty outputs (no events, an empty final): what the
 * process itself grows by doing the same work (Node's code paged in, compiled code, the young generation at
 * its cap, the floods' own rings), so that the data's share of the peak can be told apart from it.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { MAX_EVENT_BYTES } from '../../lib/runs/event-ring.ts';
import { MAX_FINAL_BYTES } from '../../lib/runs/ingest.ts';
import { MAX_ACTIVE_RUNS, MAX_RETAINED_RUNS } from '../../lib/runs/registry.ts';
import { startInitialized, toolResult } from './rpc-client.ts';
import { median } from './stats.ts';

export interface MemoryResult {
  readonly idleBytes: number;
  readonly peakDeltaBytes: number;
  readonly retainedDeltaBytes: number;
  readonly theoreticalBytes: number;
  /** Median over fresh servers of peak delta / theoretical retained bytes. */
  readonly ratio: number;
  /** Live heap (after full GC) with 32 full runs retained, over idle; and its ratio to the theory. */
  readonly liveRetainedBytes: number;
  readonly liveRatio: number;
  /** The same runs and floods with empty outputs: their peak delta, its ratio to the theory, and (peak − it) / theory. */
  readonly emptyPeakDeltaBytes: number;
  readonly emptyRatio: number;
  readonly dataRatio: number;
  readonly samples: number;
}

const THEORETICAL_BYTES = MAX_RETAINED_RUNS * (MAX_EVENT_BYTES + MAX_FINAL_BYTES);
/** A final event this large stays under MAX_FINAL_BYTES with its newline. */
const FINAL_BYTES = MAX_FINAL_BYTES - 64;
const FULL_PROMPT = `fill:${FINAL_BYTES}`;
/** No filler events, and a final result with an empty answer. */
const EMPTY_PROMPT = 'fill:0:0';
const FLOOD_MS = 1500;
const PROBE = fileURLToPath(new URL('./memory-probe.ts', import.meta.url));

function probe(options: {
  bundle: string;
  native: string;
  env: NodeJS.ProcessEnv;
  dir: string;
}): Promise<{ idle: number; filled: number; end: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', '--import', import.meta.resolve('tsx'), PROBE, options.bundle, options.native, String(FINAL_BYTES), String(FLOOD_MS)],
      { cwd: options.dir, env: options.env, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      out += c;
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0
        ? resolve(JSON.parse(out) as { idle: number; filled: number; end: number })
        : reject(new Error(`memory probe exited ${String(code)}`)),
    );
  });
}

async function once(
  options: { bundle: string; native: string; env: NodeJS.ProcessEnv; dir: string },
  prompt: string,
): Promise<{ idle: number; peak: number; after: number }> {
  const server = await startInitialized(process.execPath, [options.bundle, '--claude-bin', options.native], {
    env: options.env,
    cwd: options.dir,
  });
  try {
    await server.request('tools/list');
    await delay(300);
    const idle = server.rss().rss;
    server.resetPeak();
    for (let i = 0; i < MAX_RETAINED_RUNS; i++) {
      const { isError, result } = toolResult((await server.request('tools/call', { name: 'claude.run', arguments: { prompt } })).response);
      if (isError || (prompt === FULL_PROMPT && Number(result['final_bytes'] ?? FINAL_BYTES) <= 0))
        throw new Error(`fill run failed: ${JSON.stringify(result).slice(0, 500)}`);
    }
    const started = await Promise.all(
      Array.from({ length: MAX_ACTIVE_RUNS }, () =>
        server.request('tools/call', { name: 'claude.run.start', arguments: { prompt: `timed:${FLOOD_MS}` } }),
      ),
    );
    const ids = started.map(({ response }) => String(toolResult(response).result['run_id']));
    for (const runId of ids) {
      for (;;) {
        const { isError, result } = toolResult(
          (await server.request('tools/call', { name: 'claude.run.result', arguments: { run_id: runId, wait_seconds: 30 } })).response,
        );
        if (result['completed'] === true) {
          if (isError) throw new Error(`flood run failed: ${JSON.stringify(result).slice(0, 500)}`);
          break;
        }
      }
    }
    const { hwm, rss } = server.rss();
    return { idle, peak: hwm - idle, after: rss - idle };
  } finally {
    await server.close();
  }
}

export async function benchMemory(options: {
  bundle: string;
  native: string;
  env: NodeJS.ProcessEnv;
  dir: string;
  samples: number;
}): Promise<MemoryResult> {
  const runs: { idle: number; peak: number; after: number }[] = [];
  const empty: number[] = [];
  const live: number[] = [];
  for (let i = 0; i < options.samples; i++) {
    runs.push(await once(options, FULL_PROMPT));
    empty.push((await once(options, EMPTY_PROMPT)).peak);
    const heap = await probe(options);
    live.push(heap.filled - heap.idle);
  }
  return {
    idleBytes: median(runs.map((r) => r.idle)),
    peakDeltaBytes: median(runs.map((r) => r.peak)),
    retainedDeltaBytes: median(runs.map((r) => r.after)),
    theoreticalBytes: THEORETICAL_BYTES,
    ratio: median(runs.map((r) => r.peak / THEORETICAL_BYTES)),
    liveRetainedBytes: median(live),
    liveRatio: median(live) / THEORETICAL_BYTES,
    emptyPeakDeltaBytes: median(empty),
    emptyRatio: median(empty) / THEORETICAL_BYTES,
    dataRatio: median(runs.map((r, i) => (r.peak - (empty[i] ?? 0)) / THEORETICAL_BYTES)),
    samples: options.samples,
  };
}
