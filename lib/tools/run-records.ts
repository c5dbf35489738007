/**
 * The runs' records (lib/state/): written when a run starts, when its conversation becomes known, when it
 * settles, and when the server exits with it unsettled; read back by a later server for the run ids of an
 * instance that is gone. The runtime calls the hooks; everything about files is in lib/state/store.ts.
 */
import type { OwnerVerdict } from '../process/owner.ts';
import type { ToolOutcome } from '../contracts/providers.ts';
import type { Clock } from '../util/clock.ts';
import type { RunEntry } from '../runs/registry.ts';
import { runIdInstance } from '../runs/ids.ts';
import { RECORD_FORMAT_VERSION, type RecordedOutcome, type RunRecord } from '../state/record.ts';
import type { StateStatus, StateStore } from '../state/store.ts';
import { pastRunOf, type PastRun } from '../state/past-run.ts';
import type { LiveRun } from './run-result.ts';
import { isToolErrorCode } from '../tool-errors.ts';

/** The runtime's side: called at each point a record changes. Never throw. */
export interface RecordHooks {
  started(entry: RunEntry<LiveRun>, task: boolean): void;
  session(entry: RunEntry<LiveRun>, sessionId: string): void;
  settled(entry: RunEntry<LiveRun>): void;
}

export interface RunRecords extends RecordHooks {
  /** The server is exiting with these runs unsettled: their supervisors end them. */
  exiting(entries: readonly RunEntry<LiveRun>[]): void;
  /** What can be said of a run id of another instance; null: nothing (unknown, as before). */
  past(runId: string): PastRun | null;
  status(): StateStatus;
  sweep(): number;
}

export interface RunRecordsDeps {
  readonly store: StateStore;
  readonly clock: Clock;
  /** This server's instance (a UUID). */
  readonly instance: () => string;
  /** This server's process as an owner text (lib/process/owner.ts), null when unreadable. */
  readonly owner: () => string | null;
  readonly host: string | null;
  /** What becomes of a record's owner, seen from here; null when it cannot be judged. */
  readonly judge: (owner: string) => OwnerVerdict | 'rebooted' | null;
  /** The compact result of a settled run (the outcome claude.run returned). */
  readonly outcomeOf: (entry: RunEntry<LiveRun>) => ToolOutcome;
}

interface Records {
  readonly deps: RunRecordsDeps;
  /** The newest record of each unsettled run of this server (bounded by the active runs). */
  readonly open: Map<string, RunRecord>;
}

export function createRunRecords(deps: RunRecordsDeps): RunRecords {
  const r: Records = { deps, open: new Map() };
  return {
    started: (entry, task) => guard(() => put(r, first(r, entry, task))),
    session: (entry, sessionId) =>
      guard(() => change(r, entry, (record) => ({ ...record, state: entry.state, resume_session_id: resumable(entry, sessionId) }))),
    settled: (entry) => guard(() => settle(r, entry)),
    exiting: (entries) => {
      for (const entry of entries) guard(() => exit(r, entry));
    },
    past: (runId) => past(r, runId),
    status: () => deps.store.status(),
    sweep: () => deps.store.sweep(),
  };
}

function first(r: Records, entry: RunEntry<LiveRun>, task: boolean): RunRecord {
  return {
    format_version: RECORD_FORMAT_VERSION,
    run_id: entry.run_id,
    instance: r.deps.instance(),
    owner: r.deps.owner(),
    host: r.deps.host,
    task,
    state: entry.state,
    resume_session_id: null,
    created_at: entry.created_at,
    ended: null,
    outcome: null,
    outcome_omitted: false,
  };
}

function put(r: Records, record: RunRecord): void {
  r.open.set(record.run_id, record);
  r.deps.store.write(record);
}

function change(r: Records, entry: RunEntry<LiveRun>, edit: (record: RunRecord) => RunRecord): void {
  const record = r.open.get(entry.run_id);
  if (record !== undefined) put(r, edit(record));
}

function settle(r: Records, entry: RunEntry<LiveRun>): void {
  const record = r.open.get(entry.run_id);
  if (record === undefined) return; // never recorded, or already ended by the server's exit
  r.open.delete(entry.run_id);
  const outcome = recorded(r.deps.outcomeOf(entry), entry);
  const sessionId = entry.session_id === null ? record.resume_session_id : resumable(entry, entry.session_id);
  const at = entry.settled_at ?? now(r);
  r.deps.store.write({ ...record, state: 'completed', resume_session_id: sessionId, ended: { at, by: 'settled' }, outcome });
}

function exit(r: Records, entry: RunEntry<LiveRun>): void {
  const record = r.open.get(entry.run_id);
  if (record === undefined || entry.completed) return;
  r.open.delete(entry.run_id);
  const init = entry.live.execution?.ingest.snapshot().init?.session_id ?? null;
  const sessionId = init === null ? record.resume_session_id : resumable(entry, init);
  r.deps.store.write({ ...record, state: entry.state, resume_session_id: sessionId, ended: { at: now(r), by: 'server_exit' } });
}

/** A conversation the native saved (not with no_session_persistence), as a UUID; else null. */
function resumable(entry: RunEntry<LiveRun>, sessionId: string): string | null {
  if (entry.live.request.nativeOptions['no_session_persistence'] === true) return null;
  return /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(sessionId) ? sessionId : null;
}

function recorded(outcome: ToolOutcome, entry: RunEntry<LiveRun>): RecordedOutcome {
  return {
    ok: outcome.ok,
    summary: outcome.summary,
    error: outcome.ok ? null : { code: outcome.error.code, message: outcome.error.message },
    result: outcome.result,
    text: outcome.text ?? '',
    cancelled: entry.live.classification?.cancelled ?? false,
  };
}

/** A recorded outcome as the tool outcome it was (a code this version no longer knows reads as native_error). */
export function toolOutcomeOf(o: RecordedOutcome): ToolOutcome {
  if (o.ok) return { ok: true, summary: o.summary, result: o.result ?? {}, text: o.text };
  const error = o.error ?? { code: 'native_error', message: o.summary };
  const code = isToolErrorCode(error.code) ? error.code : 'native_error';
  return { ok: false, summary: o.summary, error: { code, message: error.message }, result: o.result, text: o.text };
}

function past(r: Records, runId: string): PastRun | null {
  const instance = runIdInstance(runId);
  // This server's own ids are the registry's to answer (unknown, evicted or released).
  if (instance === null || instance === r.deps.instance()) return null;
  const record = r.deps.store.read(runId);
  if (record === null) return null;
  const sameHost = record.host !== null && record.host === r.deps.host;
  const verdict = record.owner === null || !sameHost ? null : r.deps.judge(record.owner);
  return pastRunOf(record, verdict);
}

function now(r: Records): string {
  return new Date(r.deps.clock.wallNow()).toISOString();
}

/** A record is never worth a failed run: the store reports its own faults, and anything else is a bug, warned of. */
function guard(write: () => void): void {
  try {
    write();
  } catch (error) {
    process.emitWarning(`a run record was not written: ${error instanceof Error ? error.message : String(error)}`);
  }
}
