/**
 * What proving cleanup costs while a run is active, for each backend side by side: supervisor CPU per second
 * of an active run, with the machine's process table
 * filled to a given size by idle processes (scripts/bench/machine-load.ts: they die with this process). The run is a fake
 * CLI that keeps one `setsid` child (as the Bash tool does) for `activeMs`; the supervisor's utime + stime
 * are read from /proc/<pid>/stat when the native is spawned and when it exits.
 * Usage (alone): node --import tsx scripts/bench/supervisor-scan.ts [activeMs] [sizes...]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSupervised } from '../../lib/supervisor/parent/run-supervised.ts';
import { cleanupBackendFor, type CleanupBackend } from '../../lib/supervisor/parent/cleanup-backend.ts';
import { cpuTicks, TICKS_PER_SECOND } from './cpu-ticks.ts';
import { countProcesses, startMachineLoad } from './machine-load.ts';
import { measurePsCall, measureSharedPsScan, type SharedPsScanCost } from './ps-scan-shared.ts';

const FAKE = fileURLToPath(new URL('../../fixtures/fake-claude.mjs', import.meta.url));

export interface ScanCostRow {
  readonly backend: CleanupBackend['kind'];
  /** Processes on the machine while the run was active. */
  readonly processes: number;
  /** Supervisor CPU (ms) per second of the active run. */
  readonly cpuMsPerSecond: number;
  readonly activeMs: number;
  /** Whether the run's cleanup was proven (the /proc fallback may honestly fail to on a churning machine). */
  readonly confirmed: boolean;
}

/** The portable source beside them: four runs at once sharing the server's table, and one ps call alone. */
export interface PsScanCostRow extends SharedPsScanCost {
  readonly processes: number;
  readonly activeMs: number;
  /** CPU of one full `ps` call on the same machine, ms. */
  readonly psCallCpuMs: number;
}

/** One supervised run active for `activeMs`: the supervisor's CPU ms per second in that window. */
export async function measureRun(activeMs: number, cleanup: CleanupBackend): Promise<{ cpuMsPerSecond: number; confirmed: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-scan-'));
  let atSpawn: { ticks: number; at: number } | null = null;
  let atExit: { ticks: number; at: number } | null = null;
  try {
    const run = startSupervised(
      {
        file: FAKE,
        args: ['-p', '--output-format', 'stream-json', '--verbose', '--', 'x'],
        cwd: dir,
        stdin: null,
        env: {
          PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
          FAKE_CLAUDE_SCENARIO: 'setsid_child',
          FAKE_CLAUDE_HOLD_MS: String(activeMs),
          FAKE_CLAUDE_READY_FILE: join(dir, 'ready'),
        },
      },
      {
        onStdout: () => {},
        onReport: (message) => {
          const ticks = run.supervisorPid === null ? null : cpuTicks(run.supervisorPid);
          if (ticks === null) return;
          if (message.type === 'spawned') atSpawn = { ticks, at: performance.now() };
          if (message.type === 'exit') atExit = { ticks, at: performance.now() };
        },
      },
      { cleanup },
    );
    const outcome = await run.done;
    if (outcome.cleanup === null || outcome.cleanup.proof !== cleanup.kind)
      throw new Error(`scan bench: no ${cleanup.kind} cleanup report: ${JSON.stringify(outcome.cleanup)}`);
    const first = atSpawn as { ticks: number; at: number } | null;
    const last = atExit as { ticks: number; at: number } | null;
    if (first === null || last === null) throw new Error('scan bench: no spawned/exit report');
    return {
      cpuMsPerSecond: ((last.ticks - first.ticks) * 1000) / TICKS_PER_SECOND / ((last.at - first.at) / 1000),
      confirmed: outcome.cleanup.confirmed,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function backends(): CleanupBackend[] {
  const auto = cleanupBackendFor('auto');
  const scan: CleanupBackend = { kind: 'process_scan', reason: 'forced_off', detail: 'bench' };
  return auto.kind === 'cgroup' ? [auto, scan] : [scan];
}

export async function benchSupervisorScan(options: {
  sizes: readonly number[];
  activeMs: number;
}): Promise<{ rows: ScanCostRow[]; psScan: PsScanCostRow[] }> {
  const rows: ScanCostRow[] = [];
  const psScan: PsScanCostRow[] = [];
  for (const size of options.sizes) {
    const load = await startMachineLoad(size, 0);
    try {
      const processes = countProcesses();
      // Side by side on the same crowded machine: the cgroup backend (where one can be had), then /proc tracking,
      // then the portable source with four runs sharing the server's table, and one ps call alone.
      for (const cleanup of backends())
        rows.push({ backend: cleanup.kind, processes, ...(await measureRun(options.activeMs, cleanup)), activeMs: options.activeMs });
      const shared = await measureSharedPsScan(options.activeMs);
      psScan.push({ ...shared, processes, activeMs: options.activeMs, psCallCpuMs: await measurePsCall(process.env['PATH'] ?? '') });
    } finally {
      await load.stop();
    }
  }
  return { rows, psScan };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [active = '5000', ...sizes] = process.argv.slice(2);
  const { rows, psScan } = await benchSupervisorScan({
    activeMs: Number(active),
    sizes: sizes.length > 0 ? sizes.map(Number) : [100, 600, 1600],
  });
  for (const row of rows)
    process.stdout.write(
      `${row.backend}, ${row.processes} processes: ${row.cpuMsPerSecond.toFixed(1)} ms CPU per s (${(row.cpuMsPerSecond / 10).toFixed(1)} % of a core)${row.confirmed ? '' : ', cleanup unconfirmed'}\n`,
    );
  for (const row of psScan)
    process.stdout.write(
      `ps_scan, 4 runs, ${row.processes} processes: ${row.cpuMsPerSecond.toFixed(1)} ms CPU per s (${(row.cpuMsPerSecond / 10).toFixed(1)} % of a core: supervisors ${row.supervisorsMsPerSecond.toFixed(1)}, server ps ${row.serverPsMsPerSecond.toFixed(1)}, server's table work ${row.serverOwnMsPerSecond.toFixed(1)} (whole bench process ${row.processMsPerSecond.toFixed(1)}), ${row.serverPsCalls} server ps in ${(row.windowMs / 1000).toFixed(1)} s), ${row.confirmed}/4 confirmed; one ps call ${row.psCallCpuMs.toFixed(1)} ms CPU\n`,
    );
}
