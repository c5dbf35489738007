/**
 * One process table per server, shared by its runs. Supervisors on the portable source (ps_scan) ask for a table
 * (`table_request`); the server runs ps once for every request waiting when that ps starts and answers each over
 * its supervisor's control pipe. A request that arrives while a ps runs waits for the next one, so every answer
 * comes from a ps started after its request arrived: a supervisor that asks again after an answer never gets a
 * table older than that answer. Requests gather for TABLE_GATHER_MS before a ps starts, so supervisors asking at
 * nearly the same moment share it (and, answered together, ask together again). No timer runs while nothing
 * waits, and no ps ever runs for a server whose runs do not ask.
 */
import { runPs } from '../../process/ps-source.ts';
import { psFailure, type PsOutput } from '../../process/ps-table.ts';
import { systemClock, type Clock } from '../../util/clock.ts';
import { TABLE_REQUESTS_PENDING_MAX, type TableAnswer } from '../protocol.ts';

/** How long the first waiting request waits for others before its ps starts. */
export const TABLE_GATHER_MS = 25;

/** One supervisor's side of the exchange (its link). */
export interface TableAsker {
  /** Writes the answer to request `id`; calls `flushed` once it left for the pipe, or never can. */
  answer(id: number, answer: TableAnswer, flushed: () => void): void;
}

export interface TableSource {
  /**
   * Holds a request until a ps answers it; false (nothing held) when this asker already has
   * TABLE_REQUESTS_PENDING_MAX held: waiting, in a running ps's batch, or answered but not flushed yet.
   */
  request(asker: TableAsker, id: number): boolean;
  /** Drops what the asker has waiting (its supervisor ended); a ps already running does not answer it. */
  forget(asker: TableAsker): void;
}

export interface TableSourceDeps {
  /** One ps run; it never rejects (lib/process/ps-source.ts `runPs`). */
  readonly runPs: () => Promise<PsOutput>;
  readonly clock: Clock;
  readonly gatherMs?: number;
}

interface Held {
  readonly asker: TableAsker;
  readonly id: number;
}

export function createTableSource(deps: TableSourceDeps): TableSource {
  const gatherMs = deps.gatherMs ?? TABLE_GATHER_MS;
  let waiting: Held[] = [];
  /** Requests each asker has held, until its answer flushed. */
  const held = new Map<TableAsker, number>();
  let running = false;
  let cancelGather: (() => void) | null = null;

  const release = (asker: TableAsker): void => {
    const n = (held.get(asker) ?? 0) - 1;
    if (n > 0) held.set(asker, n);
    else held.delete(asker);
  };
  const schedule = (): void => {
    if (running || cancelGather !== null || waiting.length === 0) return;
    cancelGather = deps.clock.setTimeout(() => {
      cancelGather = null;
      void runBatch();
    }, gatherMs);
  };
  const runBatch = async (): Promise<void> => {
    const batch = waiting;
    waiting = [];
    running = true;
    const output = await deps.runPs().catch((error: unknown) => psFailure('ps_spawn_failed', `could not be run (${String(error)})`));
    running = false;
    for (const { asker, id } of batch) {
      // Forgotten meanwhile: its supervisor ended, nobody reads the answer.
      if (held.has(asker)) asker.answer(id, output, () => release(asker));
    }
    schedule();
  };

  return {
    request(asker, id) {
      const n = held.get(asker) ?? 0;
      if (n >= TABLE_REQUESTS_PENDING_MAX) return false;
      held.set(asker, n + 1);
      waiting.push({ asker, id });
      schedule();
      return true;
    },
    forget(asker) {
      held.delete(asker);
      waiting = waiting.filter((h) => h.asker !== asker);
      if (waiting.length === 0 && cancelGather !== null) {
        cancelGather();
        cancelGather = null;
      }
    },
  };
}

/** This server's one table source, made at its first use; its ps runs on the server's PATH. */
let serverSource: TableSource | null = null;

export function getServerTableSource(): TableSource {
  serverSource ??= createTableSource({ runPs: () => runPs({ path: process.env['PATH'] ?? '' }), clock: systemClock });
  return serverSource;
}
