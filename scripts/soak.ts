/**
 * `npm run soak`: the long part of the fault campaign. One bundled server runs the fake CLI 2,000 times in
 * sequence, then 500 more times with every active slot busy (4 concurrent claude.run calls at all times,
 * the registry evicting at its 32-run capacity). It checks that no process leaks (nothing left below the
 * server, no fake CLI or supervisor started during the soak still alive anywhere), that the server's
 * descriptors (/proc/<pid>/fd) return to their baseline, and that resident memory stays within the bound
 * of what 32 retained runs may hold. Exit code 1 when a check fails.
 * Usage: node --import tsx scripts/soak.ts [--sequential N] [--concurrent N]
 */
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBundle } from './bench/bundle.ts';
import { startInitialized, toolResult, type RpcServer } from './bench/rpc-client.ts';
import { percentile } from './bench/stats.ts';
import { MAX_EVENT_BYTES } from '../lib/runs/event-ring.ts';
import { MAX_FINAL_BYTES } from '../lib/runs/ingest.ts';
import { MAX_ACTIVE_RUNS, MAX_RETAINED_RUNS } from '../lib/runs/registry.ts';
import { collectDescendants, identityOf, isLive } from '../lib/process/proc-stat.ts';
import { readProcStat, readProcTable } from '../lib/process/proc-table.ts';

const FAKE = fileURLToPath(new URL('../fixtures/fake-claude.mjs', import.meta.url));
const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const SEQUENTIAL = option('--sequential', 2000);
const CONCURRENT = option('--concurrent', 500);
const WARMUP_RUNS = 40;
/** What 32 retained runs may hold at most, plus the same again for heap slack. */
const RSS_GROWTH_BOUND_BYTES = 2 * MAX_RETAINED_RUNS * (MAX_EVENT_BYTES + MAX_FINAL_BYTES);

interface Sample {
  readonly runs: number;
  readonly fds: number;
  readonly rssBytes: number;
  readonly children: number;
}

const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const fdCount = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;
const childrenOf = (pid: number): number => {
  const root = readProcStat(pid);
  return root === null ? 0 : collectDescendants(readProcTable(), [identityOf(root)]).filter(isLive).length;
};
const cmdline = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};
/** True when the process carries this soak's HOME (the server's, inherited by supervisors and the fake CLI). */
const fromSoak = (pid: number, home: string): boolean => {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`HOME=${home}`);
  } catch {
    return false;
  }
};

function sample(server: RpcServer, runs: number): Sample {
  return { runs, fds: fdCount(server.pid), rssBytes: server.rss().rss, children: childrenOf(server.pid) };
}

async function runOnce(server: RpcServer, latencies: number[], failures: string[]): Promise<void> {
  const { response, ms } = await server.request('tools/call', { name: 'claude.run', arguments: { prompt: 'soak' } });
  latencies.push(ms);
  const { isError, result } = toolResult(response);
  if (isError || result['cleanup_confirmed'] !== true) failures.push(JSON.stringify(result['error'] ?? result).slice(0, 300));
}

async function main(): Promise<number> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-soak-')));
  let server: RpcServer | null = null;
  try {
    const bundle = await ensureBundle(dir, log);
    const env: NodeJS.ProcessEnv = { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: dir, LANG: 'C.UTF-8' };
    server = await startInitialized(process.execPath, [bundle, '--claude-bin', FAKE], { env, cwd: dir });
    const failures: string[] = [];
    const latencies: number[] = [];
    for (let i = 0; i < WARMUP_RUNS; i++) await runOnce(server, [], failures);
    const baseline = sample(server, 0);
    log(
      `baseline after ${WARMUP_RUNS} warm-up runs: ${baseline.fds} fds, RSS ${(baseline.rssBytes / 1048576).toFixed(1)} MiB, ${baseline.children} children`,
    );
    const samples: Sample[] = [baseline];
    const started = performance.now();
    for (let i = 1; i <= SEQUENTIAL; i++) {
      await runOnce(server, latencies, failures);
      if (i % 250 === 0 || i === SEQUENTIAL) {
        samples.push(sample(server, i));
        const s = samples.at(-1) as Sample;
        log(
          `sequential ${i}: ${s.fds} fds, RSS ${(s.rssBytes / 1048576).toFixed(1)} MiB, ${s.children} children, ${failures.length} failures`,
        );
      }
    }
    const sequentialSeconds = (performance.now() - started) / 1000;
    const seqLatency = { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };

    const concurrentLatencies: number[] = [];
    let next = 0;
    let peakChildren = 0;
    const concurrentStarted = performance.now();
    const worker = async (): Promise<void> => {
      while (next < CONCURRENT) {
        next++;
        await runOnce(server as RpcServer, concurrentLatencies, failures);
      }
    };
    const watcher = setInterval(() => {
      peakChildren = Math.max(peakChildren, childrenOf((server as RpcServer).pid));
    }, 200);
    await Promise.all(Array.from({ length: MAX_ACTIVE_RUNS }, worker));
    clearInterval(watcher);
    const concurrentSeconds = (performance.now() - concurrentStarted) / 1000;
    const listed = toolResult((await server.request('tools/call', { name: 'claude.run.list', arguments: {} })).response).result;
    // A run settles on its supervisor's final report; the supervisor's own exit follows within milliseconds.
    const settleBy = performance.now() + 2000;
    while (childrenOf(server.pid) > 0 && performance.now() < settleBy) await new Promise((resolve) => setTimeout(resolve, 20));
    const end = sample(server, SEQUENTIAL + CONCURRENT);
    samples.push(end);
    log(
      `concurrent ${CONCURRENT}: ${end.fds} fds, RSS ${(end.rssBytes / 1048576).toFixed(1)} MiB, ${end.children} children, peak ${peakChildren} processes below the server`,
    );

    // Anything this soak started (fake CLIs, supervisors) that is still alive anywhere is a leak.
    const leaked = readProcTable().filter((s) => isLive(s) && s.pid !== server?.pid && fromSoak(s.pid, dir));
    const checks: [string, boolean, string][] = [
      [
        'every run succeeded with confirmed cleanup',
        failures.length === 0,
        `${failures.length} failed${failures.length > 0 ? `: ${failures.slice(0, 3).join(' | ')}` : ''}`,
      ],
      ['no process left below the server', end.children === 0, `${end.children}`],
      [
        'no fake CLI or supervisor of the soak alive anywhere',
        leaked.length === 0,
        leaked.map((s) => `${s.pid} ${cmdline(s.pid).slice(0, 60)}`).join(', ') || 'none',
      ],
      [
        'descriptors back at baseline',
        end.fds <= baseline.fds,
        `${baseline.fds} → ${end.fds} (max seen ${Math.max(...samples.map((s) => s.fds))})`,
      ],
      [
        'RSS growth within bound',
        end.rssBytes - baseline.rssBytes <= RSS_GROWTH_BOUND_BYTES,
        `${((end.rssBytes - baseline.rssBytes) / 1048576).toFixed(1)} MiB (bound ${(RSS_GROWTH_BOUND_BYTES / 1048576).toFixed(0)} MiB; max seen ${(Math.max(...samples.map((s) => s.rssBytes - baseline.rssBytes)) / 1048576).toFixed(1)} MiB)`,
      ],
      [
        'registry at its retention bound',
        listed['retained'] === MAX_RETAINED_RUNS && listed['active'] === 0,
        `retained ${String(listed['retained'])}, active ${String(listed['active'])}`,
      ],
    ];
    log('');
    log(
      `sequential: ${SEQUENTIAL} runs in ${sequentialSeconds.toFixed(1)} s (${(SEQUENTIAL / sequentialSeconds).toFixed(1)} runs/s), claude.run p50 ${seqLatency.p50.toFixed(1)} ms, p99 ${seqLatency.p99.toFixed(1)} ms`,
    );
    log(
      `concurrent: ${CONCURRENT} runs, ${MAX_ACTIVE_RUNS} at a time, in ${concurrentSeconds.toFixed(1)} s (${(CONCURRENT / concurrentSeconds).toFixed(1)} runs/s), claude.run p50 ${percentile(concurrentLatencies, 50).toFixed(1)} ms, p99 ${percentile(concurrentLatencies, 99).toFixed(1)} ms`,
    );
    for (const [name, ok, detail] of checks) log(`${ok ? 'PASS' : 'FAIL'}  ${name}: ${detail}`);
    return checks.every(([, ok]) => ok) ? 0 : 1;
  } finally {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
