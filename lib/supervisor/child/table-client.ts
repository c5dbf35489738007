/**
 * The supervisor's process table on the portable source (ps_scan). It asks its server, which runs one ps for every
 * supervisor asking at that moment (lib/supervisor/parent/table-source.ts), and parses the answer exactly as it
 * would parse its own ps output. It runs ps itself whenever the server cannot answer: its control pipe is at EOF
 * (the server is gone), no answer came within TABLE_ANSWER_TIMEOUT_MS, the server refused, or
 * TABLE_REQUESTS_PENDING_MAX requests are still unanswered. An answer that comes after its reader fell back is
 * dropped; one to a request never made is an error.
 */
import { parsePsTable, type PsTableResult } from '../../process/ps-table.ts';
import type { Clock } from '../../util/clock.ts';
import { assertNever } from '../../util/assert-never.ts';
import { TABLE_REQUEST_WAIT_MAX_MS, TABLE_REQUESTS_PENDING_MAX, type TableAnswerMessage } from '../protocol.ts';
import { formatTableRequest } from '../table-wire.ts';

/**
 * How long a supervisor waits for the server's table before it runs ps itself. One ps costs 50-150 ms of CPU at
 * 600-1,600 processes, and a request may wait for the ps before it: 3 s leaves a loaded machine room.
 */
export const TABLE_ANSWER_TIMEOUT_MS = 3000;

export interface TableClientDeps {
  /** Writes one report line on fd 2. */
  readonly send: (line: string) => void;
  /** The supervisor's own ps (readPsTable with its PATH). */
  readonly readOwnTable: () => Promise<PsTableResult>;
  readonly clock: Clock;
  readonly answerTimeoutMs?: number;
}

export interface TableClient {
  /**
   * One complete table, or the failure naming ps; never throws. `waitMs` (at most TABLE_REQUEST_WAIT_MAX_MS):
   * how long the read may wait for a ps the server shares with other supervisors' requests (tracking offers
   * its interval; the ladder 0).
   */
  readTable(waitMs?: number): Promise<PsTableResult>;
  /** Cleanup began: reads waiting on a shared ps are asked again with no wait (or run ps, past the bound). */
  hurry(): void;
  /** Routes a `table` control line; false when it answers no request ever made (a protocol error). */
  onAnswer(message: TableAnswerMessage): boolean;
  /** The control pipe ended: reads waiting now run ps at once, and so does every later read. */
  onControlEnd(): void;
}

interface Waiting {
  /** null once the read was settled otherwise (it fell back to its own ps); the request stays counted. */
  settle: ((result: PsTableResult | Promise<PsTableResult>) => void) | null;
  cancelTimer: () => void;
  readonly waitMs: number;
}

export function createTableClient(deps: TableClientDeps): TableClient {
  const timeoutMs = deps.answerTimeoutMs ?? TABLE_ANSWER_TIMEOUT_MS;
  // Every request the server may still answer, by id; answered ones leave, late ones stay until their answer.
  const waiting = new Map<number, Waiting>();
  let nextId = 0;
  let controlEnded = false;

  const fallBack = (entry: Waiting): void => {
    const settle = entry.settle;
    entry.settle = null;
    settle?.(deps.readOwnTable());
  };

  const readTable = (waitMs = 0): Promise<PsTableResult> => {
    if (controlEnded || waiting.size >= TABLE_REQUESTS_PENDING_MAX) return deps.readOwnTable();
    const id = nextId++;
    const wait = Math.min(Math.max(0, waitMs), TABLE_REQUEST_WAIT_MAX_MS);
    return new Promise<PsTableResult>((resolve) => {
      const entry: Waiting = { settle: resolve, cancelTimer: () => {}, waitMs: wait };
      waiting.set(id, entry);
      // The server may take the offered wait before its ps even starts.
      entry.cancelTimer = deps.clock.setTimeout(() => {
        fallBack(entry);
      }, wait + timeoutMs);
      deps.send(formatTableRequest(id, wait));
    });
  };

  return {
    readTable,
    hurry() {
      for (const entry of [...waiting.values()]) {
        if (entry.settle === null || entry.waitMs === 0) continue;
        // The waiting request stays counted until its answer comes (late, dropped); a new one asks for now.
        const settle = entry.settle;
        entry.settle = null;
        entry.cancelTimer();
        settle(readTable(0));
      }
    },
    onAnswer(message) {
      const entry = waiting.get(message.id);
      // Never asked, or answered already: the server is not following the protocol.
      if (entry === undefined) return false;
      waiting.delete(message.id);
      entry.cancelTimer();
      const settle = entry.settle;
      if (settle === null) return true;
      entry.settle = null;
      const { answer } = message;
      switch (answer.kind) {
        case 'output':
          settle(parsePsTable(answer.stdout.toString('utf8')));
          break;
        case 'rows':
          settle({ kind: 'table', rows: answer.rows });
          break;
        case 'failure':
          settle(answer);
          break;
        case 'refused':
          settle(deps.readOwnTable());
          break;
        default:
          assertNever(answer);
      }
      return true;
    },
    onControlEnd() {
      controlEnded = true;
      for (const entry of waiting.values()) {
        entry.cancelTimer();
        fallBack(entry);
      }
      waiting.clear();
    },
  };
}
