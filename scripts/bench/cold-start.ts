/**
 * Benchmark 1: cold start to the `initialize` response. The bundle, `node -e 0` (the floor), the least a Node
 * stdio server can do (a second floor: one fixed answer through process.stdin and process.stdout) and a
 * minimal server on the official MCP SDK are started in turn, interleaved, with the same environment, and with
 * them that stdio floor carrying the bundle's whole code in a function it never calls (what parsing the code
 * costs, apart from running any of it); each server
 * is ended (stdin EOF) once it answered. Then, in separate rounds that cannot disturb those (the bundle's
 * first tools/list also starts its spare supervisor), each server is asked for tools/list right after the
 * handshake: the bundle loads its tool providers after the handshake, and this shows where that work went.
 * The bundle is also asked server/discover as its first line, as Claude Code asks it: spawn → that answer
 * is what a host's probe deadline (3 s in Claude Code 2.1.332) must cover.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { INITIALIZE_PARAMS } from './rpc-client.ts';
import { median } from './stats.ts';

export interface ColdStartResult {
  readonly floorMs: number;
  /** The stdio floor (scripts/bench/stdio-floor.cjs): spawn → its one answer. */
  readonly stdioFloorMs: number;
  readonly stdioOverFloor: number;
  readonly bundleOverStdioFloor: number;
  /** The stdio floor with the bundle's whole code appended inside a function never called: V8 parses it, nothing runs. */
  readonly parseOnlyMs: number;
  readonly parseOnlyOverStdioFloor: number;
  readonly bundleMs: number;
  readonly sdkMs: number;
  /** Spawn → the tools/list response (sent once initialize was answered), medians of the separate rounds. */
  readonly bundleListMs: number;
  readonly sdkListMs: number;
  /** Medians of the per-round ratios (each round starts all three back to back). */
  readonly bundleOverFloor: number;
  readonly bundleOverSdk: number;
  /** Spawn → the answer to server/discover sent as Claude Code 2.1.332 sends it (the modern era's first line). */
  readonly bundleDiscoverMs: number;
  /** The slowest of those rounds: what a host's probe deadline must cover. */
  readonly bundleDiscoverMaxMs: number;
  readonly samples: number;
}

const INIT_LINE = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INITIALIZE_PARAMS })}\n`;
/** Claude Code 2.1.332's probe: written at spawn, answered or not within its deadline (docs/protocol.md). */
const DISCOVER_LINE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 'server-discover-probe-1',
  method: 'server/discover',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'claude-code', version: '2.1.332' },
      'io.modelcontextprotocol/clientCapabilities': {
        roots: { listChanged: true },
        elicitation: { form: {}, url: {} },
        extensions: { 'io.modelcontextprotocol/tasks': {} },
      },
    },
  },
})}\n`;
const LIST_LINES = `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`;

interface Answered {
  /** Spawn → first stdout line (the initialize response). */
  readonly initMs: number;
  /** Spawn → the tools/list response; NaN when not asked. */
  readonly listMs: number;
}

/** Rounds of the tools/list figure (after the interleaved rounds). */
const LIST_ROUNDS = 5;

/** Spawn → exit of `node -e 0`. */
function timeFloor(env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['-e', '0'], { cwd, env, stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', () => resolve(performance.now() - started));
  });
}

/**
 * Spawn → first stdout line (the initialize response, written before the process could even read it), then
 * tools/list sent at once → its response.
 */
function timeInitialize(script: string, env: NodeJS.ProcessEnv, cwd: string, list = false, first = INIT_LINE): Promise<Answered> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [script], { cwd, env, stdio: ['pipe', 'pipe', 'ignore'] });
    let initMs = Number.NaN;
    let listMs = Number.NaN;
    let out = '';
    child.once('error', reject);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      const lines = out.split('\n').slice(0, -1);
      if (Number.isNaN(initMs) && lines.length >= 1) {
        initMs = performance.now() - started;
        if (!out.startsWith('{') || !(lines[0] ?? '').includes('"result"'))
          reject(new Error(`${script}: unexpected answer ${out.slice(0, 200)}`));
        if (list) child.stdin.write(LIST_LINES);
        else child.stdin.end();
      }
      if (list && Number.isNaN(listMs) && lines.length >= 2) {
        listMs = performance.now() - started;
        if (!(lines[1] ?? '').includes('"tools"'))
          reject(new Error(`${script}: unexpected tools/list answer ${(lines[1] ?? '').slice(0, 200)}`));
        child.stdin.end();
      }
    });
    child.once('exit', () =>
      Number.isNaN(initMs) || (list && Number.isNaN(listMs))
        ? reject(new Error(`${script} exited without answering`))
        : resolve({ initMs, listMs }),
    );
    child.stdin.write(first);
  });
}

export async function benchColdStart(options: {
  bundle: string;
  sdkServer: string;
  stdioFloor: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  samples: number;
}): Promise<ColdStartResult> {
  const floor: number[] = [];
  const stdioFloor: number[] = [];
  const parseOnly: number[] = [];
  const parseOnlyFile = join(options.cwd, 'parse-only.cjs');
  const bundleCode = readFileSync(options.bundle, 'utf8').replace(/^#!.*\n/, '');
  writeFileSync(
    parseOnlyFile,
    `${readFileSync(options.stdioFloor, 'utf8').replace(/^#!.*\n/, '')}\nfunction neverCalled() {\n${bundleCode}\n}\n`,
  );
  const bundle: Answered[] = [];
  const sdk: Answered[] = [];
  const discover: number[] = [];
  // One warm-up of each so the page cache holds every file.
  await timeFloor(options.env, options.cwd);
  await timeInitialize(options.stdioFloor, options.env, options.cwd);
  await timeInitialize(parseOnlyFile, options.env, options.cwd);
  await timeInitialize(options.bundle, options.env, options.cwd);
  await timeInitialize(options.sdkServer, options.env, options.cwd);
  for (let i = 0; i < options.samples; i++) {
    floor.push(await timeFloor(options.env, options.cwd));
    stdioFloor.push((await timeInitialize(options.stdioFloor, options.env, options.cwd)).initMs);
    parseOnly.push((await timeInitialize(parseOnlyFile, options.env, options.cwd)).initMs);
    bundle.push(await timeInitialize(options.bundle, options.env, options.cwd));
    sdk.push(await timeInitialize(options.sdkServer, options.env, options.cwd));
    discover.push((await timeInitialize(options.bundle, options.env, options.cwd, false, DISCOVER_LINE)).initMs);
  }
  const bundleList: number[] = [];
  const sdkList: number[] = [];
  for (let i = 0; i < LIST_ROUNDS; i++) {
    bundleList.push((await timeInitialize(options.bundle, options.env, options.cwd, true)).listMs);
    sdkList.push((await timeInitialize(options.sdkServer, options.env, options.cwd, true)).listMs);
  }
  return {
    floorMs: median(floor),
    stdioFloorMs: median(stdioFloor),
    stdioOverFloor: median(stdioFloor.map((ms, i) => ms / (floor[i] as number))),
    bundleOverStdioFloor: median(bundle.map((b, i) => b.initMs / (stdioFloor[i] as number))),
    parseOnlyMs: median(parseOnly),
    parseOnlyOverStdioFloor: median(parseOnly.map((ms, i) => ms / (stdioFloor[i] as number))),
    bundleMs: median(bundle.map((b) => b.initMs)),
    sdkMs: median(sdk.map((s) => s.initMs)),
    bundleListMs: median(bundleList),
    sdkListMs: median(sdkList),
    bundleOverFloor: median(bundle.map((b, i) => b.initMs / (floor[i] as number))),
    bundleOverSdk: median(bundle.map((b, i) => b.initMs / (sdk[i] as (typeof sdk)[number]).initMs)),
    bundleDiscoverMs: median(discover),
    bundleDiscoverMaxMs: Math.max(...discover),
    samples: options.samples,
  };
}
