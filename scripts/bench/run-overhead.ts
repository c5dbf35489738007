/**
 * Benchmark 2: per-run adapter overhead. `claude.run` through the bundled server against the fake CLI
 * (scenario ok, instant result) vs the same fake CLI spawned directly with the same argv, env and cwd
 * (`--version` first, as the adapter does). Rounds interleave both.
 * The split comes from an in-process timeline of the same steps (version check, supervisor, native, cleanup)
 * driven through lib/ with the bundled supervisor, once sequential and once overlapped as execute.ts does.
 */
import { spawn } from 'node:child_process';
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CLI_TREE } from '../../lib/native/tree.ts';
import { assertNativeVersion } from '../../lib/native/version.ts';
import { prepareSupervisor, type PreparedSupervisor } from '../../lib/supervisor/parent/run-supervised.ts';
import type { SupervisorCommand } from '../../lib/supervisor/parent/supervisor-command.ts';
import { ROOT } from '../build.ts';
import { startInitialized, toolResult } from './rpc-client.ts';
import { median, monoMs } from './stats.ts';

export interface Split {
  readonly versionMs: number;
  /** From the end of the version check to the native process being spawned. */
  readonly supervisorWaitMs: number;
  readonly nativeMs: number;
  /** From the native exit report to the supervisor's exit with its cleanup report read. */
  readonly cleanupMs: number;
  readonly totalMs: number;
}

export interface RunOverheadResult {
  readonly adapterMs: number;
  readonly nativeVersionMs: number;
  readonly nativeRunMs: number;
  /** Median over rounds of adapter − (native --version + native run). */
  readonly overheadMs: number;
  readonly sequential: Split;
  readonly overlapped: Split;
  /** Spawn → exit of an idle bundled supervisor that gets EOF at once, and of `node -e 0`. */
  readonly supervisorBootMs: number;
  /** The same for a bundle of the supervisor alone (what a separate entry file would cost). */
  readonly supervisorOnlyBootMs: number;
  readonly nodeFloorMs: number;
  readonly samples: number;
}

interface Recorded {
  readonly argv: string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
}

function timeSpawn(file: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd: string, closeStdin = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(file, [...args], { cwd, env, stdio: [closeStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    if (closeStdin) child.stdin?.end();
    child.stdout?.resume();
    child.stderr?.resume();
    child.once('error', reject);
    child.once('close', () => resolve(performance.now() - started));
  });
}

async function timeline(mode: 'sequential' | 'overlapped', fake: string, rec: Recorded, command: SupervisorCommand): Promise<Split> {
  const t0 = monoMs();
  let supervisor: PreparedSupervisor | null = mode === 'overlapped' ? prepareSupervisor(command) : null;
  const prober = supervisor ?? prepareSupervisor(command);
  await assertNativeVersion({
    bin: fake,
    tree: CLI_TREE,
    timeoutMs: 10_000,
    query: (q) =>
      prober.probe({ file: fake, args: q.args, cwd: rec.cwd, env: rec.env, timeoutMs: q.timeoutMs, maxStdoutBytes: q.maxStdoutBytes }),
  });
  const t1 = monoMs();
  if (supervisor === null) await prober.dispose();
  supervisor ??= prepareSupervisor(command);
  let t2 = Number.NaN;
  let t3 = Number.NaN;
  const run = supervisor.start(
    { file: fake, args: rec.argv, cwd: rec.cwd, env: rec.env, stdin: null },
    {
      onStdout: () => {},
      onReport: (message) => {
        if (message.type === 'spawned') t2 = monoMs();
        if (message.type === 'exit') t3 = monoMs();
      },
    },
  );
  const outcome = await run.done;
  const t4 = monoMs();
  if (outcome.cleanup?.confirmed !== true || outcome.exit?.code !== 0) throw new Error(`timeline run failed: ${JSON.stringify(outcome)}`);
  return { versionMs: t1 - t0, supervisorWaitMs: t2 - t1, nativeMs: t3 - t2, cleanupMs: t4 - t3, totalMs: t4 - t0 };
}

const medianSplit = (splits: readonly Split[]): Split => ({
  versionMs: median(splits.map((s) => s.versionMs)),
  supervisorWaitMs: median(splits.map((s) => s.supervisorWaitMs)),
  nativeMs: median(splits.map((s) => s.nativeMs)),
  cleanupMs: median(splits.map((s) => s.cleanupMs)),
  totalMs: median(splits.map((s) => s.totalMs)),
});

export async function benchRunOverhead(options: {
  bundle: string;
  fake: string;
  env: NodeJS.ProcessEnv;
  dir: string;
  samples: number;
}): Promise<RunOverheadResult> {
  const { bundle, fake, env, dir } = options;
  const serverArgs = [bundle, '--claude-bin', fake];
  // Learn the exact native argv/env/cwd the adapter uses from one recorded run.
  const recordFile = join(dir, 'record.json');
  const probe = await startInitialized(process.execPath, serverArgs, { env: { ...env, FAKE_CLAUDE_RECORD: recordFile }, cwd: dir });
  toolResult((await probe.request('tools/call', { name: 'claude.run', arguments: { prompt: 'hi' } })).response);
  await probe.close();
  const raw = JSON.parse(readFileSync(recordFile, 'utf8')) as Recorded;
  rmSync(recordFile);
  const { FAKE_CLAUDE_RECORD: _dropped, ...nativeEnv } = raw.env;
  const rec: Recorded = { argv: raw.argv, env: nativeEnv, cwd: raw.cwd };

  // The supervisor alone, bundled the same way, to see what loading the whole bundle costs it.
  const supervisorOnly = join(dir, 'supervisor-only.cjs');
  await build({
    stdin: {
      contents: "import { runSupervisor } from './lib/supervisor/child/supervisor.ts'; runSupervisor();",
      resolveDir: ROOT,
      loader: 'ts',
      sourcefile: 'supervisor-only.ts',
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: supervisorOnly,
    logLevel: 'warning',
  });
  const server = await startInitialized(process.execPath, serverArgs, { env, cwd: dir });
  const command: SupervisorCommand = { file: process.execPath, args: [bundle, '__supervisor'] };
  const adapter: number[] = [];
  const version: number[] = [];
  const native: number[] = [];
  const overhead: number[] = [];
  const sequential: Split[] = [];
  const overlapped: Split[] = [];
  const boot: number[] = [];
  const bootOnly: number[] = [];
  const floor: number[] = [];
  try {
    for (let i = 0; i < options.samples + 2; i++) {
      const call = await server.request('tools/call', { name: 'claude.run', arguments: { prompt: 'hi' } });
      const outcome = toolResult(call.response);
      if (outcome.isError) throw new Error(`claude.run failed: ${JSON.stringify(outcome.result)}`);
      const v = await timeSpawn(fake, ['--version'], rec.env, rec.cwd);
      const n = await timeSpawn(fake, rec.argv, rec.env, rec.cwd);
      const seq = await timeline('sequential', fake, rec, command);
      const ovl = await timeline('overlapped', fake, rec, command);
      const b = await timeSpawn(process.execPath, [bundle, '__supervisor'], env, dir, true);
      const o = await timeSpawn(process.execPath, [supervisorOnly], env, dir, true);
      const f = await timeSpawn(process.execPath, ['-e', '0'], env, dir);
      if (i < 2) continue; // warm-up rounds
      adapter.push(call.ms);
      version.push(v);
      native.push(n);
      overhead.push(call.ms - v - n);
      sequential.push(seq);
      overlapped.push(ovl);
      boot.push(b);
      bootOnly.push(o);
      floor.push(f);
    }
  } finally {
    await server.close();
  }
  return {
    adapterMs: median(adapter),
    nativeVersionMs: median(version),
    nativeRunMs: median(native),
    overheadMs: median(overhead),
    sequential: medianSplit(sequential),
    overlapped: medianSplit(overlapped),
    supervisorBootMs: median(boot),
    supervisorOnlyBootMs: median(bootOnly),
    nodeFloorMs: median(floor),
    samples: options.samples,
  };
}
