/**
 * Process-table helpers for process specs: identities by pid + start time, readiness files written by
 * fixtures, and polling with a hard deadline (never sleep-then-assert).
 */
import { existsSync, readFileSync } from 'node:fs';
import type { ProcessIdentity } from '../../lib/supervisor/protocol.ts';
import { identityOf, isLive, isSameProcess, type ProcStat } from '../../lib/process/proc-stat.ts';
import { readProcStat, readProcTable } from '../../lib/process/proc-table.ts';
import { pollUntil } from './poll.ts';
import { num, parseObj, str } from './typed-results.ts';

export { readProcStat, readProcTable };
export type { ProcStat };

const POLL_MS = 20;

/** The identity of a live pid right now, or null. */
export function identify(pid: number): ProcessIdentity | null {
  const stat = readProcStat(pid);
  return stat && isLive(stat) ? identityOf(stat) : null;
}

/** True while that very process (same start time) is alive and not a zombie. */
export function isRunning(id: ProcessIdentity): boolean {
  const stat = readProcStat(id.pid);
  return isSameProcess(id, stat) && stat !== null && isLive(stat);
}

/** waitFor's deadline when the caller names none. */
export const WAIT_FOR_DEFAULT_MS = 30_000;

/**
 * Polls `probe` until it returns a value other than undefined/false; throws at the deadline, naming `what`.
 * The default deadline is a liveness bound, not a time claim: with two suites at once a fake's readiness line
 * has taken more than 10 s.
 */
export async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = WAIT_FOR_DEFAULT_MS): Promise<T> {
  return pollUntil(what, probe, { timeoutMs, intervalMs: POLL_MS });
}

/** Resolves once none of `ids` is alive; throws (naming the survivors) at the deadline. */
export async function waitForGone(ids: readonly ProcessIdentity[], timeoutMs = 10_000): Promise<void> {
  await waitFor(`processes gone`, () => ids.every((id) => !isRunning(id)), timeoutMs).catch(() => {
    const left = ids.filter(isRunning).map((id) => id.pid);
    throw new Error(`still alive after ${timeoutMs} ms: ${left.join(', ')}`);
  });
}

export interface ReadyLine {
  readonly ready: string;
  readonly pid: number;
}

export function readReadyLines(file: string): ReadyLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.endsWith('}'))
    .map((l, i) => {
      const line = parseObj(l, `ready line ${i + 1} of ${file}`);
      return { ready: str(line['ready'], 'ready'), pid: num(line['pid'], 'pid') };
    });
}

/** Waits for a fixture's readiness line `ready` and returns the identity of the pid it names. */
export async function waitForReady(file: string, ready: string, timeoutMs = WAIT_FOR_DEFAULT_MS): Promise<ProcessIdentity> {
  const line = await waitFor(`ready "${ready}" in ${file}`, () => readReadyLines(file).find((l) => l.ready === ready), timeoutMs);
  const id = identify(line.pid);
  if (id === null) throw new Error(`ready "${ready}" named pid ${line.pid}, which is not running`);
  return id;
}

/** Test cleanup: SIGKILL whatever of `ids` still runs (so a failing spec leaks nothing). */
export function killIfRunning(ids: readonly (ProcessIdentity | null)[]): void {
  for (const id of ids) {
    if (id && isRunning(id)) {
      try {
        process.kill(id.pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
}

/** Live processes in session `sid` (a detached supervisor's pid names its session). */
export function sessionMembers(sid: number): ProcStat[] {
  return readProcTable().filter((s) => s.sid === sid && isLive(s));
}
