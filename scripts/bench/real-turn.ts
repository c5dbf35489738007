/**
 * Benchmark 2b: one real turn. The pinned `claude` binary against the loopback fake Messages API, one
 * "say hi" turn: spawn → exit of the bare binary with the argv and environment the adapter would give it,
 * against the round trip of `claude.run` on a warm bundled server (one run done, its spare supervisor
 * ready). Interleaved rounds, median of the per-round figures. Everything runs inside a loopback-only
 * network namespace (scripts/netns-run.mjs --require), like the native test tier.
 * Also reads what the idle spare supervisor costs: its RSS and PSS (/proc/<pid>/smaps_rollup).
 * Child usage: node --import tsx scripts/bench/real-turn.ts <json options>  (prints one JSON line)
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { startFakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import { createNativeSandbox, realClaudeBin } from '../../spec/helpers/native-env.ts';
import { buildNativeArgv, type NativeArgv } from '../../lib/native/argv.ts';
import { getNativeEnv } from '../../lib/native/native-env.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import { ADAPTER_VERSION } from '../../lib/version.ts';
import { isLive } from '../../lib/process/proc-stat.ts';
import { readProcTable } from '../../lib/process/proc-table.ts';
import { cpuTicks } from './cpu-ticks.ts';
import { startInitialized, toolResult } from './rpc-client.ts';
import { median } from './stats.ts';

export interface RealTurnOptions {
  readonly bundle: string;
  readonly samples: number;
}

export interface RealTurnResult {
  readonly adapterMs: number;
  readonly bareMs: number;
  /** Median of per-round adapter / bare. */
  readonly ratio: number;
  /** Median of per-round adapter − bare. */
  readonly addedMs: number;
  readonly versionMs: number;
  /**
   * Where the added time lies, from the fake API's arrival stamps (ms): median of (start → the turn's first API
   * request) through claude.run minus the same for the bare binary, and likewise (last API request → end).
   */
  readonly addedBeforeApiMs: number;
  readonly addedAfterApiMs: number;
  /** How many adapter rounds found a spare ready (all of them, unless a spare could not be prepared). */
  readonly spareRounds: number;
  readonly samples: number;
  /** The idle spare supervisor: resident and proportional set sizes, bytes (null when none was found). */
  readonly spareRssBytes: number | null;
  readonly sparePssBytes: number | null;
}

const SELF = fileURLToPath(import.meta.url);
const NETNS = fileURLToPath(new URL('../netns-run.mjs', import.meta.url));
const PROMPT = 'say hi';
/** A spare boots and checks the version in a few hundred ms after its run's supervisor exited; rounds wait at most this long. */
const SPARE_WAIT_MS = 10_000;

export function benchRealTurn(options: RealTurnOptions): Promise<RealTurnResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [NETNS, '--require', '--', process.execPath, '--import', import.meta.resolve('tsx'), SELF, JSON.stringify(options)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      out += c;
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve(JSON.parse(out) as RealTurnResult) : reject(new Error(`real-turn benchmark exited ${String(code)}`)),
    );
  });
}

/** Wall-clock (epoch ms) span of one turn, to place it against the fake API's arrival stamps. */
interface Span {
  readonly startEpochMs: number;
  readonly endEpochMs: number;
}

function isResultLine(line: string): boolean {
  try {
    return (JSON.parse(line) as { type?: unknown }).type === 'result';
  } catch {
    return false;
  }
}

function timeProcess(
  file: string,
  args: readonly string[],
  env: Record<string, string>,
  cwd: string,
  span?: (s: Span) => void,
  input: NativeArgv | null = null,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const startEpochMs = Date.now();
    const child = spawn(file, [...args], { cwd, env, stdio: [input === null ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    // As the adapter does: the prompt on stdin; stream-json input ends once the turn's result is out.
    if (input !== null) {
      child.stdin?.on('error', () => {});
      child.stdin?.write(input.stdin);
      if (!input.streamInput) child.stdin?.end();
    }
    // The turn is over at its result line (the real CLI does not put `type` first: each line is parsed).
    let pending = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      if (input?.streamInput !== true) return;
      pending += chunk.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (line.includes('"type":"result"') && isResultLine(line)) child.stdin?.end();
      }
    });
    child.stderr?.resume();
    child.once('error', reject);
    child.once('close', (code) => {
      span?.({ startEpochMs, endEpochMs: Date.now() });
      if (code === 0) resolve(performance.now() - started);
      else reject(new Error(`${file} exited ${String(code)}`));
    });
  });
}

/** Live children of `parent` by /proc/<pid>/stat (the spare is detached into its own session, not re-parented). */
function childrenOf(parent: number): number[] {
  return readProcTable()
    .filter((stat) => stat.ppid === parent && isLive(stat))
    .map((stat) => stat.pid);
}

function memoryOf(pid: number): { rss: number; pss: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kib = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN) * 1024;
    return { rss: kib('Rss'), pss: kib('Pss') };
  } catch {
    return null;
  }
}

/**
 * The server's spare once it is warm: booted, its version check done, idle (no child, no CPU used across
 * three looks 50 ms apart), as it is when a host's next tool call comes. A run started while the spare still
 * boots would measure the two competing for the CPU, not the run.
 */
async function waitForSpare(serverPid: number): Promise<number | null> {
  const until = performance.now() + SPARE_WAIT_MS;
  let quiet = 0;
  let last: number | null = null;
  while (performance.now() < until) {
    const children = childrenOf(serverPid);
    const spare = children.length === 1 ? children[0] : undefined;
    const ticks = spare === undefined ? null : cpuTicks(spare);
    quiet = spare !== undefined && ticks !== null && ticks === last && childrenOf(spare).length === 0 ? quiet + 1 : 0;
    last = ticks;
    if (spare !== undefined && quiet >= 3) return spare;
    await delay(50);
  }
  return null;
}

async function measure(options: RealTurnOptions): Promise<RealTurnResult> {
  const fake = await startFakeAnthropic({ scenario: { kind: 'text' } });
  const sandbox = await createNativeSandbox({ baseUrl: fake.url });
  const bin = realClaudeBin();
  const argv = buildNativeArgv({
    tree: CLI_TREE,
    outputMode: 'stream-json',
    permissionMode: 'dontAsk',
    options: {},
    prompt: PROMPT,
  });
  const nativeEnv = getNativeEnv(sandbox.env, ADAPTER_VERSION);
  const server = await startInitialized(process.execPath, [options.bundle, '--claude-bin', bin], { env: sandbox.env, cwd: sandbox.cwd });
  try {
    await server.request('tools/list');
    const run = async (span?: (s: Span) => void): Promise<number> => {
      const startEpochMs = Date.now();
      const { response, ms } = await server.request('tools/call', { name: 'claude.run', arguments: { prompt: PROMPT } });
      span?.({ startEpochMs, endEpochMs: Date.now() });
      const { isError, result } = toolResult(response);
      if (isError) throw new Error(`claude.run failed: ${JSON.stringify(result).slice(0, 500)}`);
      return ms;
    };
    // Warm-up: the binary's first start (page cache) and the server's first run.
    await timeProcess(bin, argv.args, nativeEnv, sandbox.cwd, undefined, argv);
    await run();
    const adapter: number[] = [];
    const bare: number[] = [];
    const version: number[] = [];
    const ratios: number[] = [];
    const added: number[] = [];
    let spareRounds = 0;
    const before = { bare: [] as number[], adapter: [] as number[] };
    const after = { bare: [] as number[], adapter: [] as number[] };
    /** The API requests that arrived during `span`: how long before the first and after the last. */
    const place =
      (into: 'bare' | 'adapter', seen: number) =>
      (span: Span): void => {
        const turn = fake.requests.slice(seen);
        const first = turn[0];
        const last = turn.at(-1);
        if (first === undefined || last === undefined) return;
        before[into].push(first.receivedAtEpochMs - span.startEpochMs);
        after[into].push(span.endEpochMs - last.receivedAtEpochMs);
      };
    let spareMemory: { rss: number; pss: number } | null = null;
    for (let i = 0; i < options.samples; i++) {
      version.push(await timeProcess(bin, ['--version'], nativeEnv, sandbox.cwd));
      const b = await timeProcess(bin, argv.args, nativeEnv, sandbox.cwd, place('bare', fake.requests.length), argv);
      const spare = await waitForSpare(server.pid);
      if (spare !== null) {
        spareRounds++;
        spareMemory ??= memoryOf(spare);
      }
      const a = await run(place('adapter', fake.requests.length));
      adapter.push(a);
      bare.push(b);
      ratios.push(a / b);
      added.push(a - b);
    }
    return {
      adapterMs: median(adapter),
      bareMs: median(bare),
      ratio: median(ratios),
      addedMs: median(added),
      versionMs: median(version),
      addedBeforeApiMs: median(before.adapter) - median(before.bare),
      addedAfterApiMs: median(after.adapter) - median(after.bare),
      spareRounds,
      samples: options.samples,
      spareRssBytes: spareMemory?.rss ?? null,
      sparePssBytes: spareMemory?.pss ?? null,
    };
  } finally {
    await server.close();
    await fake.close();
    await sandbox.cleanup();
  }
}

if (process.argv[1] === SELF) {
  const result = await measure(JSON.parse(process.argv[2] ?? '{}') as RealTurnOptions);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
