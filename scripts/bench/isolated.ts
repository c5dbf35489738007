/**
 * Runs one latency benchmark in a fresh client process, so the measuring client's own heap (grown by the
 * benchmarks before it) adds no garbage-collection pauses to the latencies it reports.
 * Child usage: node --import tsx scripts/bench/isolated.ts <bench> <json options>  (prints one JSON line)
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { benchProgressLatency, type ProgressLatencyResult } from './progress-latency.ts';
import { benchResponsiveness, type ResponsivenessResult } from './responsiveness.ts';

export interface IsolatedBenches {
  readonly responsive: { options: Parameters<typeof benchResponsiveness>[0]; result: ResponsivenessResult };
  readonly progress: { options: Parameters<typeof benchProgressLatency>[0]; result: ProgressLatencyResult };
}

const SELF = fileURLToPath(import.meta.url);

export function runIsolated<K extends keyof IsolatedBenches>(
  bench: K,
  options: IsolatedBenches[K]['options'],
): Promise<IsolatedBenches[K]['result']> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), SELF, bench, JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      out += c;
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0
        ? resolve(JSON.parse(out) as IsolatedBenches[K]['result'])
        : reject(new Error(`${bench} benchmark exited ${String(code)}`)),
    );
  });
}

if (process.argv[1] === SELF) {
  const [bench, raw = '{}'] = process.argv.slice(2);
  const options = JSON.parse(raw) as never;
  const result = bench === 'responsive' ? await benchResponsiveness(options) : await benchProgressLatency(options);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
