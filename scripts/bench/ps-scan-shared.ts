/**
 * What the portable source (ps_scan) costs with FOUR runs active at once, on a machine filled to a given size: the
 * four supervisors' CPU (their own and that of any ps they ran themselves), the CPU of the ps runs of the
 * "server" (this process, through one shared table source: lib/supervisor/parent/table-source.ts), and the
 * server's own work for the table (starting each ps, and parsing each output once and filtering it for each
 * supervisor: process CPU around those synchronous calls), per second of the window in which all four are
 * active; beside it, this whole process's CPU in the window (an upper bound of the server's share: it holds tsx's
 * loader thread and the bench's own bookkeeping too), and the CPU of one ps call measured alone. The runs start
 * half a second apart, so their tracking is not in phase.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareSupervisor, type SupervisedRun } from '../../lib/supervisor/parent/run-supervised.ts';
import type { CleanupBackend } from '../../lib/supervisor/parent/cleanup-backend.ts';
import { createTableSource, type TableSource } from '../../lib/supervisor/parent/table-source.ts';
import { runPs } from '../../lib/process/ps-source.ts';
import { systemClock } from '../../lib/util/clock.ts';
import { cpuTicksWithChildren, reapedChildrenTicks, TICKS_PER_SECOND } from './cpu-ticks.ts';

const FAKE = fileURLToPath(new URL('../../fixtures/fake-claude.mjs', import.meta.url));
const PS_SCAN: CleanupBackend = { kind: 'ps_scan', reason: 'forced_off', detail: 'bench' };
/** Runs active at once. */
export const SHARED_RUNS = 4;
/** Between two runs' starts. */
const STAGGER_MS = 500;
/**
 * The window ends this long before the first run's native exits: a supervisor's reaped native adds its whole
 * CPU to the supervisor's children's time at once, and that is not the supervisor's cost.
 */
const END_MARGIN_MS = 500;
/** ps calls timed alone for one call's cost (ticks are 10 ms). */
const PS_CALLS_TIMED = 10;

export interface SharedPsScanCost {
  /** All four supervisors plus the server's ps runs and the server itself, CPU ms per second of the window. */
  readonly cpuMsPerSecond: number;
  readonly supervisorsMsPerSecond: number;
  readonly serverPsMsPerSecond: number;
  /** The server's own work for the table: starting each ps, parsing its output once, filtering it per supervisor. */
  readonly serverOwnMsPerSecond: number;
  /** This whole process's CPU (not counted in cpuMsPerSecond: an upper bound of serverOwnMsPerSecond). */
  readonly processMsPerSecond: number;
  /** ps runs of the server in the window, and the window's length. */
  readonly serverPsCalls: number;
  readonly windowMs: number;
  /** Runs whose cleanup was proven. */
  readonly confirmed: number;
}

/** CPU of one `ps` call, ms, measured alone on this machine as it is now. */
export async function measurePsCall(path: string): Promise<number> {
  const before = reapedChildrenTicks(process.pid) ?? 0;
  for (let i = 0; i < PS_CALLS_TIMED; i++) await runPs({ path });
  const after = reapedChildrenTicks(process.pid) ?? 0;
  return ((after - before) * 1000) / TICKS_PER_SECOND / PS_CALLS_TIMED;
}

interface Mark {
  readonly ticks: number;
  readonly serverTicks: number;
  /** This process's own user + system CPU, µs. */
  readonly ownUs: number;
  /** Of it, the table source's synchronous work, µs. */
  readonly tableUs: number;
  readonly calls: number;
  readonly at: number;
}

/** Four ps_scan runs each active for about `activeMs`, sharing one table source. */
export async function measureSharedPsScan(activeMs: number): Promise<SharedPsScanCost> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-ps-scan-'));
  let calls = 0;
  let tableUs = 0;
  const timed = <T>(work: () => T): T => {
    const before = process.cpuUsage();
    try {
      return work();
    } finally {
      const spent = process.cpuUsage(before);
      tableUs += spent.user + spent.system;
    }
  };
  const source = createTableSource({
    runPs: () => {
      calls++;
      return timed(() => runPs({ path: process.env['PATH'] ?? '' }));
    },
    clock: systemClock,
  });
  const tables: TableSource = {
    request: (asker, id, waitMs) => source.request(asker, id, waitMs),
    forget: (asker) => {
      source.forget(asker);
    },
    answerFor: (answer, pid) => timed(() => source.answerFor(answer, pid)),
  };
  const runs: SupervisedRun[] = [];
  const exits: Promise<void>[] = [];
  const spawned = new Set<number>();
  /** When each run's native is due to exit: its spawn report's time plus its hold. */
  const nativeEnds: number[] = [];
  let start: Mark | null = null;
  let onAllActive = (_mark: Mark): void => {};
  const allActive = new Promise<Mark>((resolve) => {
    onAllActive = resolve;
  });
  const mark = (): Mark => ({
    ticks: runs.reduce((sum, r) => sum + (r.supervisorPid === null ? 0 : (cpuTicksWithChildren(r.supervisorPid) ?? 0)), 0),
    serverTicks: reapedChildrenTicks(process.pid) ?? 0,
    ownUs: ((usage) => usage.user + usage.system)(process.cpuUsage()),
    tableUs,
    calls,
    at: performance.now(),
  });
  try {
    for (let i = 0; i < SHARED_RUNS; i++) {
      const hold = activeMs + (SHARED_RUNS - 1 - i) * STAGGER_MS;
      const supervisor = prepareSupervisor(undefined, { cleanup: PS_SCAN, tables });
      exits.push(supervisor.exited);
      const run = supervisor.start(
        {
          file: FAKE,
          args: ['-p', '--output-format', 'stream-json', '--verbose', '--', 'x'],
          cwd: dir,
          stdin: null,
          env: {
            PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
            FAKE_CLAUDE_SCENARIO: 'setsid_child',
            FAKE_CLAUDE_HOLD_MS: String(hold),
          },
        },
        {
          onStdout: () => {},
          onReport: (message) => {
            if (message.type === 'spawned') {
              spawned.add(i);
              nativeEnds.push(performance.now() + hold);
            }
            if (message.type === 'spawned' && spawned.size === SHARED_RUNS) {
              start = mark();
              onAllActive(start);
            }
          },
        },
      );
      runs.push(run);
      await new Promise((resolve) => setTimeout(resolve, STAGGER_MS));
    }
    // Once the last run spawned, all four are active until the first native exits (about activeMs later; a run
    // whose start was delayed shortens the window, so no reaped native is counted as its supervisor's CPU).
    const first = await Promise.race([allActive, ...runs.map((r) => r.done.then(() => start))]);
    if (first === null) throw new Error('ps_scan bench: the four runs were never active together');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(...nativeEnds) - END_MARGIN_MS - performance.now())));
    const last = mark();
    const outcomes = await Promise.all(runs.map((r) => r.done));
    // Reaped, so a later measure of this process's children's CPU does not take theirs.
    await Promise.all(exits);
    const seconds = (last.at - first.at) / 1000;
    const perSecond = (ticks: number): number => (ticks * 1000) / TICKS_PER_SECOND / seconds;
    const supervisorsMsPerSecond = perSecond(last.ticks - first.ticks);
    const serverPsMsPerSecond = perSecond(last.serverTicks - first.serverTicks);
    const serverOwnMsPerSecond = (last.tableUs - first.tableUs) / 1000 / seconds;
    return {
      cpuMsPerSecond: supervisorsMsPerSecond + serverPsMsPerSecond + serverOwnMsPerSecond,
      supervisorsMsPerSecond,
      serverPsMsPerSecond,
      serverOwnMsPerSecond,
      processMsPerSecond: (last.ownUs - first.ownUs) / 1000 / seconds,
      serverPsCalls: last.calls - first.calls,
      windowMs: last.at - first.at,
      confirmed: outcomes.filter((o) => o.cleanup?.confirmed === true && o.cleanup.proof === 'ps_scan').length,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
