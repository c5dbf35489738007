/**
 * One warm spare supervisor, so a run does not wait for a Node start before its version probe.
 * The spare is an ordinary prepared supervisor (its own run marker, chosen when it is prepared, so one
 * marker still means one run): `take` hands it to exactly one run and never hands it out again. A new
 * spare is prepared when `warm` is called (after the handshake) and after each run that took one ended,
 * never while runs are being started, so a burst of runs never spawns more than one idle process.
 * An idle spare runs nothing: it waits on its control pipe. `close` lets it go (EOF on that pipe, its
 * cleanup report awaited) and refuses to prepare another; `stop` (signal shutdown) SIGKILLs the idle spare.
 */
import type { PreparedSupervisor, ProbeSpec } from './run-supervised.ts';
import type { SupervisorCommand } from './supervisor-command.ts';
import type { ProbeOutcome } from '../protocol.ts';
import { fileIdentity } from '../file-id.ts';

export type PrepareFn = (command?: SupervisorCommand) => PreparedSupervisor;

export interface SparePoolOptions {
  readonly command?: SupervisorCommand;
  /**
   * The probe every run starts with (the version check), run by each spare as soon as it is prepared, so a
   * run finds its answer ready instead of waiting for it. null when it cannot be known now (no binary).
   */
  readonly earlyProbe?: () => ProbeSpec | null;
}

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

interface EarlyProbe {
  readonly spec: ProbeSpec;
  readonly outcome: Promise<ProbeOutcome>;
}

export function createSparePool(prepare: PrepareFn, options: SparePoolOptions = {}): SparePool {
  const { command } = options;
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
    const entry: Spare = { supervisor: withEarlyProbe(supervisor, options.earlyProbe), command, gone: false };
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
      // A signal leaves the server milliseconds: the idle spare is killed outright rather than left to
      // notice EOF, with its group: the version check it may be running is in that group (the supervisor
      // leads it). Its exit was not observed, so it is still our unreaped child and neither its pid nor its
      // group id can have been reused.
      // With a cgroup, the EOF above is enough: the spare ends its check by cgroup.kill, removes its cgroup
      // and exits within milliseconds, also after this server is gone; a SIGKILL would leave the cgroup behind.
      if (entry !== null && !entry.gone && entry.supervisor.supervisorPid !== null && entry.supervisor.cgroup === null) {
        try {
          process.kill(-entry.supervisor.supervisorPid, 'SIGKILL');
        } catch {
          /* already gone */
        }
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

/**
 * Starts the early probe on an idle spare and answers the run's first identical probe with it, the
 * working directory included: a version manager's shim picks the version by directory. The answer is used
 * only if the file answered (it exited), by itself: the image that wrote it was the file (a launcher
 * that exec'd another binary, a script's interpreter and a launcher that started a process all differ,
 * lib/supervisor/child/exe-check.ts), and the file's identity is unchanged now (lib/supervisor/file-id.ts);
 * the run's spawn is bound to that identity too. Otherwise (another directory, the binary replaced
 * meanwhile, a timeout or spawn error of that moment, a script or a shim) the run's probe runs now, as
 * without a spare.
 */
function withEarlyProbe(supervisor: PreparedSupervisor, earlyProbe: SparePoolOptions['earlyProbe']): PreparedSupervisor {
  let spec: ProbeSpec | null = null;
  try {
    spec = earlyProbe?.() ?? null;
  } catch {
    spec = null; // e.g. no binary yet: the run resolves and reports that itself
  }
  if (spec === null || supervisor.supervisorPid === null) return supervisor;
  let early: EarlyProbe | null = { spec, outcome: supervisor.probe(spec) };
  return {
    ...supervisor,
    probe(wanted) {
      const ready = early;
      early = null;
      if (ready === null) return supervisor.probe(wanted);
      // One probe at a time per supervisor: another probe waits for the early one to end.
      if (!sameProbe(ready.spec, wanted)) return ready.outcome.then(() => supervisor.probe(wanted));
      return ready.outcome.then((outcome) => {
        // Only an answer the file gave itself (not a timeout or spawn error of that moment; not a binary a
        // shim or interpreter ran, which may have changed since unseen by the file's identity), about the
        // file as it still is.
        const vouched = supervisor.probedFile(wanted.file);
        const answeredItself = typeof vouched === 'string' && supervisor.probedImage(wanted.file) === vouched;
        const current = outcome.kind === 'exited' && answeredItself ? fileIdentity(wanted.file) : null;
        return current !== null && current === vouched ? outcome : supervisor.probe(wanted);
      });
    },
  };
}

function sameProbe(a: ProbeSpec, b: ProbeSpec): boolean {
  if (a.file !== b.file || a.cwd !== b.cwd || a.timeoutMs !== b.timeoutMs || a.maxStdoutBytes !== b.maxStdoutBytes) return false;
  if (a.args.length !== b.args.length || a.args.some((arg, i) => arg !== b.args[i])) return false;
  const keys = Object.keys(a.env);
  return keys.length === Object.keys(b.env).length && keys.every((k) => Object.hasOwn(b.env, k) && a.env[k] === b.env[k]);
}
