/**
 * One process table per server, shared by its runs. Supervisors on the portable source (ps_scan) ask for a table
 * (`table_request`); the server runs ps once for every request waiting when that ps starts and answers each over
 * its supervisor's control pipe. A request that arrives while a ps runs waits for the next one, so every answer
 * comes from a ps started after its request arrived: a supervisor that asks again after an answer never gets a
 * table older than that answer. Each request says how long it can wait (its `waitMs`, at least TABLE_GATHER_MS):
 * the ps starts when the first waiting request is due, so runs tracked every few seconds share one ps whatever
 * their phases, and the ladder's requests (waitMs 0) take every waiting one along. No timer runs while nothing
 * waits, and no ps ever runs for a server whose runs do not ask.
 */
import { runPs } from '../../process/ps-source.ts';
import { psFailure, type PsOutput } from '../../process/ps-table.ts';
import { systemClock, type Clock } from '../../util/clock.ts';
import { TABLE_REQUESTS_PENDING_MAX, type TableAnswer } from '../protocol.ts';
import { createTableView } from './table-view.ts';

/** The least a request waits for others before its ps starts. */
export const TABLE_GATHER_MS = 25;

/** One supervisor's side of the exchange (its link). */
export interface TableAsker {
  /** Writes the answer to request `id`; calls `flushed` once it left for the pipe, or never can. */
  answer(id: number, answer: TableAnswer, flushed: () => void): void;
}

export interface TableSource {
  /**
   * Holds a request until a ps answers it (starting at most `waitMs` from now, when no ps runs then); false
   * (nothing held) when this asker already has TABLE_REQUESTS_PENDING_MAX held: waiting, in a running ps's
   * batch, or answered but not flushed yet.
   */
  request(asker: TableAsker, id: number, waitMs: number): boolean;
  /** Drops what the asker has waiting (its supervisor ended); a ps already running does not answer it. */
  forget(asker: TableAsker): void;
  /** What to send the supervisor `supervisorPid` for an answer of this source (table-view.ts). */
  answerFor(answer: TableAnswer, supervisorPid: number | undefined): TableAnswer;
}

export interface TableSourceDeps {
  /** One ps run; it never rejects (lib/process/ps-source.ts `runPs`). */
  readonly runPs: () => Promise<PsOutput>;
  readonly clock: Clock;
}

interface Held {
  readonly asker: TableAsker;
  readonly id: number;
  /** When, on the clock, its ps should start at the latest. */
  readonly due: number;
}

interface SourceState {
  readonly deps: TableSourceDeps;
  waiting: Held[];
  /** Requests each asker has held, until its answer flushed. */
  readonly held: Map<TableAsker, number>;
  running: boolean;
  timer: { readonly due: number; readonly cancel: () => void } | null;
}

export function createTableSource(deps: TableSourceDeps): TableSource {
  const s: SourceState = { deps, waiting: [], held: new Map(), running: false, timer: null };
  const view = createTableView();
  return {
    answerFor: (answer, supervisorPid) => view.answerFor(answer, supervisorPid),
    request(asker, id, waitMs) {
      const n = s.held.get(asker) ?? 0;
      if (n >= TABLE_REQUESTS_PENDING_MAX) return false;
      s.held.set(asker, n + 1);
      s.waiting.push({ asker, id, due: deps.clock.now() + Math.max(waitMs, TABLE_GATHER_MS) });
      schedule(s);
      return true;
    },
    forget(asker) {
      s.held.delete(asker);
      s.waiting = s.waiting.filter((h) => h.asker !== asker);
      schedule(s);
    },
  };
}

/** Keeps one timer, for the earliest due request, while requests wait and no ps runs. */
function schedule(s: SourceState): void {
  const due = s.running || s.waiting.length === 0 ? null : Math.min(...s.waiting.map((h) => h.due));
  if (s.timer !== null && s.timer.due === due) return;
  s.timer?.cancel();
  s.timer = null;
  if (due === null) return;
  const cancel = s.deps.clock.setTimeout(
    () => {
      s.timer = null;
      void runBatch(s);
    },
    Math.max(0, due - s.deps.clock.now()),
  );
  s.timer = { due, cancel };
}

async function runBatch(s: SourceState): Promise<void> {
  const batch = s.waiting;
  s.waiting = [];
  s.running = true;
  const output = await s.deps.runPs().catch((error: unknown) => psFailure('ps_spawn_failed', `could not be run (${String(error)})`));
  s.running = false;
  for (const { asker, id } of batch) {
    // Forgotten meanwhile: its supervisor ended, nobody reads the answer.
    if (s.held.has(asker)) asker.answer(id, output, () => release(s, asker));
  }
  schedule(s);
}

function release(s: SourceState, asker: TableAsker): void {
  const n = (s.held.get(asker) ?? 0) - 1;
  if (n > 0) s.held.set(asker, n);
  else s.held.delete(asker);
}

/** This server's one table source, made at its first use; its ps runs on the server's PATH. */
let serverSource: TableSource | null = null;

export function getServerTableSource(): TableSource {
  serverSource ??= createTableSource({ runPs: () => runPs({ path: process.env['PATH'] ?? '' }), clock: systemClock });
  return serverSource;
}
