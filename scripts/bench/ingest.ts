/**
 * Benchmark 3: stream ingestion. One flood file of realistic partial-message events is streamed at full
 * speed by the native stand-in, once into `claude.run` of the bundled server (through the supervisor relay,
 * bounded splitter, event parsing, ring and final retention) and once into a bare consumer (splitter +
 * JSON.parse) that spawns it directly. Both are timed from the stand-in's first write (it prints the
 * CLOCK_MONOTONIC instant on stderr) to the end: the tool response, or the bare consumer's stdout EOF.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startInitialized, toolResult } from './rpc-client.ts';
import { median, monoMs } from './stats.ts';

const BARE = fileURLToPath(new URL('./bare-consumer.mjs', import.meta.url));

export interface IngestResult {
  readonly bytes: number;
  readonly events: number;
  readonly adapterMiBs: number;
  readonly bareMiBs: number;
  /** Median over rounds of adapter throughput / bare throughput. */
  readonly ratio: number;
  readonly samples: number;
}

function runChild(file: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, [...args], { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      out += c;
    });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${file} exited ${String(code)}`))));
  });
}

const MIB = 1024 * 1024;

export async function benchIngest(options: {
  bundle: string;
  native: string;
  env: NodeJS.ProcessEnv;
  dir: string;
  bytes: number;
  samples: number;
}): Promise<IngestResult> {
  const { bundle, native, env, dir } = options;
  const flood = join(dir, 'flood.jsonl');
  await runChild(process.execPath, [native, '--write-flood', flood, String(options.bytes)], env, dir);
  const server = await startInitialized(process.execPath, [bundle, '--claude-bin', native], { env, cwd: dir });
  const ratios: number[] = [];
  const adapterRates: number[] = [];
  const bareRates: number[] = [];
  let bytes = 0;
  let events = 0;
  try {
    for (let i = 0; i < options.samples + 1; i++) {
      const { response } = await server.request('tools/call', { name: 'claude.run', arguments: { prompt: `file:${flood}` } });
      const doneAt = monoMs();
      const { isError, result: summary } = toolResult(response);
      if (isError) throw new Error(`flood run failed: ${JSON.stringify(summary).slice(0, 2000)}`);
      // The stand-in's start instant (its stderr tail) and the event count are in the full result only.
      const { result } = toolResult(
        (await server.request('tools/call', { name: 'claude.run.result', arguments: { run_id: summary['run_id'], detail: 'full' } }))
          .response,
      );
      const startedAt = Number(/bench-start (\S+)/.exec(String(result['stderr_tail']))?.[1]);
      const bare = JSON.parse(await runChild(process.execPath, [BARE, native, '-p', '--', `file:${flood}`], env, dir)) as {
        bytes: number;
        events: number;
        startedAt: number;
        doneAt: number;
      };
      if (i === 0) continue; // warm-up
      bytes = bare.bytes;
      events = Number(result['events_total']);
      const adapterRate = bare.bytes / (doneAt - startedAt);
      const bareRate = bare.bytes / (bare.doneAt - bare.startedAt);
      adapterRates.push(adapterRate);
      bareRates.push(bareRate);
      ratios.push(adapterRate / bareRate);
    }
  } finally {
    await server.close();
  }
  return {
    bytes,
    events,
    adapterMiBs: (median(adapterRates) * 1000) / MIB,
    bareMiBs: (median(bareRates) * 1000) / MIB,
    ratio: median(ratios),
    samples: options.samples,
  };
}
