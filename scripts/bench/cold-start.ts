/**
 * Benchmark 1: cold start to the `initialize` response. The bundle, `node -e 0` (the floor) and a minimal
 * server on the official MCP SDK are started in turn, interleaved, with the same environment.
 */
import { spawn } from 'node:child_process';
import { INITIALIZE_PARAMS } from './rpc-client.ts';
import { median } from './stats.ts';

export interface ColdStartResult {
  readonly floorMs: number;
  readonly bundleMs: number;
  readonly sdkMs: number;
  /** Medians of the per-round ratios (each round starts all three back to back). */
  readonly bundleOverFloor: number;
  readonly bundleOverSdk: number;
  readonly samples: number;
}

const INIT_LINE = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INITIALIZE_PARAMS })}\n`;

/** Spawn → exit of `node -e 0`. */
function timeFloor(env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['-e', '0'], { cwd, env, stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', () => resolve(performance.now() - started));
  });
}

/** Spawn → first stdout line (the initialize response, written before the process could even read it). */
function timeInitialize(script: string, env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [script], { cwd, env, stdio: ['pipe', 'pipe', 'ignore'] });
    let elapsed = Number.NaN;
    let out = '';
    child.once('error', reject);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      if (Number.isNaN(elapsed) && out.includes('\n')) {
        elapsed = performance.now() - started;
        if (!out.startsWith('{') || !out.includes('"result"')) reject(new Error(`${script}: unexpected answer ${out.slice(0, 200)}`));
        child.stdin.end();
      }
    });
    child.once('exit', () => (Number.isNaN(elapsed) ? reject(new Error(`${script} exited without answering`)) : resolve(elapsed)));
    child.stdin.write(INIT_LINE);
  });
}

export async function benchColdStart(options: { bundle: string; sdkServer: string; env: NodeJS.ProcessEnv; cwd: string; samples: number }): Promise<ColdStartResult> {
  const floor: number[] = [];
  const bundle: number[] = [];
  const sdk: number[] = [];
  // One warm-up of each so the page cache holds every file.
  await timeFloor(options.env, options.cwd);
  await timeInitialize(options.bundle, options.env, options.cwd);
  await timeInitialize(options.sdkServer, options.env, options.cwd);
  for (let i = 0; i < options.samples; i++) {
    floor.push(await timeFloor(options.env, options.cwd));
    bundle.push(await timeInitialize(options.bundle, options.env, options.cwd));
    sdk.push(await timeInitialize(options.sdkServer, options.env, options.cwd));
  }
  return {
    floorMs: median(floor),
    bundleMs: median(bundle),
    sdkMs: median(sdk),
    bundleOverFloor: median(bundle.map((b, i) => b / (floor[i] as number))),
    bundleOverSdk: median(bundle.map((b, i) => b / (sdk[i] as number))),
    samples: options.samples,
  };
}
