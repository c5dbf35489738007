/**
 * A follow-up turn in a live native process (one more stream-json user line, as an open run sends it) against
 * the same turn as `--resume` in a new process (what every continuation cost before), side by side, on the
 * real pinned binary and the loopback fake API, in a loopback-only network namespace: time from the message to
 * the turn's result, and the CPU of that turn (the live process's growth; the new process's whole life).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startFakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import { createNativeSandbox, realClaudeBin } from '../../spec/helpers/native-env.ts';
import { buildNativeArgv, userMessageLine } from '../../lib/native/argv.ts';
import { getNativeEnv } from '../../lib/native/native-env.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import { ADAPTER_VERSION } from '../../lib/version.ts';
import { cpuTicks, cpuTicksWithChildren, TICKS_PER_SECOND } from './cpu-ticks.ts';
import { median } from './stats.ts';

export interface FollowUpResult {
  /** Median of per-round live-turn ms / resume-turn ms. */
  readonly ratio: number;
  readonly liveMs: number;
  readonly resumeMs: number;
  /** CPU per turn, ms (medians). */
  readonly liveCpuMs: number;
  readonly resumeCpuMs: number;
  readonly samples: number;
}

const SELF = fileURLToPath(import.meta.url);
const NETNS = fileURLToPath(new URL('../netns-run.mjs', import.meta.url));
/** One turn may take this long before the round is abandoned as broken. */
const TURN_DEADLINE_MS = 60_000;

export function benchFollowUpTurn(samples: number): Promise<FollowUpResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [NETNS, '--require', '--', process.execPath, '--import', import.meta.resolve('tsx'), SELF, String(samples)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      out += c;
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve(JSON.parse(out) as FollowUpResult) : reject(new Error(`follow-up benchmark exited ${String(code)}`)),
    );
  });
}

/** A native on stream-json input; `turn` writes one user line and resolves at that turn's result line. */
interface LiveNative {
  readonly child: ChildProcessWithoutNullStreams;
  turn(text: string): Promise<{ ms: number; sessionId: string }>;
  end(): Promise<void>;
}

function startNative(bin: string, args: readonly string[], env: Record<string, string>, cwd: string): LiveNative {
  const child = spawn(bin, [...args], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr.resume();
  let buffered = '';
  let waiter: ((sessionId: string) => void) | null = null;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      // The real CLI does not put `type` first in a result line: parse each line.
      let value: { type?: unknown; session_id?: unknown };
      try {
        value = JSON.parse(line) as { type?: unknown; session_id?: unknown };
      } catch {
        continue;
      }
      if (value.type !== 'result') continue;
      waiter?.(String(value.session_id));
      waiter = null;
    }
  });
  return {
    child,
    turn(text) {
      const started = performance.now();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no result within the turn deadline')), TURN_DEADLINE_MS);
        waiter = (sessionId) => {
          clearTimeout(timer);
          resolve({ ms: performance.now() - started, sessionId });
        };
        child.stdin.write(userMessageLine(text));
      });
    },
    end() {
      return new Promise((resolve) => {
        child.once('close', () => resolve());
        child.stdin.end();
      });
    },
  };
}

const ticksToMs = (ticks: number): number => (ticks * 1000) / TICKS_PER_SECOND;

async function measure(samples: number): Promise<FollowUpResult> {
  const fake = await startFakeAnthropic({ scenario: { kind: 'text' } });
  const sandbox = await createNativeSandbox({ baseUrl: fake.url });
  const bin = realClaudeBin();
  const env = getNativeEnv(sandbox.env, ADAPTER_VERSION);
  const base = buildNativeArgv({ tree: CLI_TREE, outputMode: 'stream-json', permissionMode: 'dontAsk', options: {}, prompt: 'x' }).args;
  const live = startNative(bin, base, env, sandbox.cwd);
  try {
    const { sessionId } = await live.turn('say hi');
    const ratios: number[] = [];
    const liveMs: number[] = [];
    const resumeMs: number[] = [];
    const liveCpu: number[] = [];
    const resumeCpu: number[] = [];
    for (let i = 0; i < samples; i++) {
      const before = cpuTicks(live.child.pid ?? -1) ?? 0;
      const l = await live.turn(`follow-up ${i}`);
      liveCpu.push(ticksToMs((cpuTicks(live.child.pid ?? -1) ?? before) - before));
      // The same turn as a continuation in a new process: spawn → the result (its exit is not waited for).
      const resumed = buildNativeArgv({
        tree: CLI_TREE,
        outputMode: 'stream-json',
        permissionMode: 'dontAsk',
        options: { resume_session_id: sessionId },
        prompt: 'x',
      }).args;
      const started = performance.now();
      const fresh = startNative(bin, resumed, env, sandbox.cwd);
      const r = await fresh.turn(`resumed ${i}`);
      const rMs = performance.now() - started;
      resumeCpu.push(ticksToMs(cpuTicksWithChildren(fresh.child.pid ?? -1) ?? 0));
      await fresh.end();
      liveMs.push(l.ms);
      resumeMs.push(rMs);
      ratios.push(l.ms / rMs);
      if (r.sessionId !== sessionId) throw new Error('the resumed turn is not in the same session');
    }
    return {
      ratio: median(ratios),
      liveMs: median(liveMs),
      resumeMs: median(resumeMs),
      liveCpuMs: median(liveCpu),
      resumeCpuMs: median(resumeCpu),
      samples,
    };
  } finally {
    await live.end();
    await fake.close();
    await sandbox.cleanup();
  }
}

if (process.argv[1] === SELF) {
  measure(Number(process.argv[2] ?? '5')).then(
    (r) => process.stdout.write(JSON.stringify(r)),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
