/**
 * One warm spare supervisor, so a run does not wait for a Node start before its version probe.
 * The spare is an ordinary prepared supervisor (its own run marker, chosen when it is prepared, so one
 * marker still means one run): `take` hands it to exactly one run and never hands it out again. A new
 * spare is prepared when `warm` is called (after the handshake) and after each run that took one ended,
 * never while runs are being started, so a burst of runs never spawns more than one idle process.
 * An idle spare runs nothing: it waits on its control pipe. `close` lets it go (EOF on that pipe, its
 * cleanup report awaited) and refuses to prepare another; `stop` (signal shutdown) SIGKILLs the idle spare.
 */
import type { PreparedSupervisor } from './run-supervised.ts';
import type { SupervisorCommand } from './supervisor-command.ts';

export type PrepareFn = (command?: SupervisorCommand) => PreparedSupervisor;

export interface SparePool {
  /** The spare when it is idle, alive and for this command; otherwise a freshly prepared supervisor. */
  take(command?: SupervisorCommand): PreparedSupervisor;
  /** Prepares the spare when there is none (no-op once closed). */
  warm(): void;
  /** Lets the idle spare go and waits until it exited; no spare is prepared afterwards. Idempotent. */
  close(): Promise<void>;
  /** Ends the idle spare at once, without waiting (signal shutdown). */
  stop(): void;
  /** The idle spare's pid, or null (for accounting and the benchmarks). */
  sparePid(): number | null;
}

interface Spare {
  readonly supervisor: PreparedSupervisor;
  readonly command: SupervisorCommand | undefined;
  gone: boolean;
}

export function createSparePool(prepare: PrepareFn, command?: SupervisorCommand): SparePool {
  let spare: Spare | null = null;
  let closed = false;
  const pending = new Set<Promise<unknown>>();

  const track = (promise: Promise<unknown>): void => {
    pending.add(promise);
    void promise.finally(() => pending.delete(promise));
  };

  const warm = (): void => {
    if (closed || spare !== null) return;
    let supervisor: PreparedSupervisor;
    try {
      supervisor = prepare(command);
    } catch {
      return; // EAGAIN/EMFILE: the next run prepares its own and reports the failure itself
    }
    const entry: Spare = { supervisor, command, gone: false };
    // A spare that ended while idle (killed from outside) is dropped, not replaced: no respawn loop.
    void supervisor.exited.then(() => {
      entry.gone = true;
      if (spare === entry) spare = null;
    });
    spare = entry;
  };

  const release = (): void => {
    const entry = spare;
    spare = null;
    if (entry !== null) track(entry.supervisor.dispose().then(() => entry.supervisor.exited));
  };

  return {
    take(wanted) {
      const entry = spare;
      if (entry !== null && !entry.gone && entry.supervisor.supervisorPid !== null && wanted === entry.command) {
        spare = null;
        // The next spare boots after this run, not beside it.
        void entry.supervisor.exited.then(warm);
        return entry.supervisor;
      }
      const fresh = prepare(wanted);
      if (wanted === command) void fresh.exited.then(warm);
      return fresh;
    },
    warm,
    stop() {
      closed = true;
      const entry = spare;
      release();
      // A signal leaves the server milliseconds: the idle spare has started nothing, so it is killed
      // outright rather than left to notice EOF. Its exit was not observed, so it is still our unreaped
      // child and the pid cannot have been reused.
      if (entry !== null && !entry.gone && entry.supervisor.supervisorPid !== null) {
        try { process.kill(entry.supervisor.supervisorPid, 'SIGKILL'); } catch { /* already gone */ }
      }
    },
    async close() {
      closed = true;
      release();
      while (pending.size > 0) await Promise.all([...pending]);
    },
    sparePid: () => spare?.supervisor.supervisorPid ?? null,
  };
}
