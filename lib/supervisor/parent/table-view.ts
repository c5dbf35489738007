/**
 * What the server sends each supervisor of one shared ps (table-source.ts): the output parsed once for all of
 * them, and to each only the rows it can need (lib/process/ps-relevant.ts), so a supervisor's cost per table
 * follows its run, not the machine. Output the server cannot read is answered as the failure the supervisor's own
 * parse would give (it names ps); a supervisor whose pid is unknown, or rows that would not fit one answer line,
 * get the raw output, which the supervisor parses whole as before.
 */
import { parsePsTable, type PsFailure, type PsRow } from '../../process/ps-table.ts';
import { indexPsTable, rowsForSupervisor, type PsTableIndex } from '../../process/ps-relevant.ts';
import { TABLE_ANSWER_LINE_MAX_BYTES, type TableAnswer } from '../protocol.ts';

/**
 * Output up to this size is always answered as rows: JSON writes no byte of a row as more than 6 (a control
 * character as \u00XX), so its rows fit one answer line. Larger output goes raw (its own bound applies).
 */
export const ROWS_ANSWER_OUTPUT_MAX_BYTES = Math.floor((TABLE_ANSWER_LINE_MAX_BYTES - 1024) / 6);

export interface TableView {
  /** The answer for the supervisor `supervisorPid` to a table request the shared ps answered with `answer`. */
  answerFor(answer: TableAnswer, supervisorPid: number | undefined): TableAnswer;
}

/** One per table source: its outputs are parsed once each, whoever asks. */
export function createTableView(): TableView {
  // Answers of one ps share the Buffer; the entry dies with it.
  const parsed = new WeakMap<Buffer, PsTableIndex | PsFailure>();
  // Rows of the latest table parsed, by line, so the next parse reads only lines that changed. Bounded by one
  // table (at most TABLE_OUTPUT_MAX_BYTES of lines), replaced by each parse.
  let latestLines: ReadonlyMap<string, PsRow> = new Map();
  const parseOnce = (stdout: Buffer): PsTableIndex | PsFailure => {
    const known = parsed.get(stdout);
    if (known !== undefined) return known;
    const next = new Map<string, PsRow>();
    const result = parsePsTable(stdout.toString('utf8'), { previous: latestLines, next });
    const entry = result.kind === 'failure' ? result : indexPsTable(result.rows);
    if (result.kind === 'table') latestLines = next;
    parsed.set(stdout, entry);
    return entry;
  };
  return {
    answerFor(answer, supervisorPid) {
      if (answer.kind !== 'output' || supervisorPid === undefined || answer.stdout.length > ROWS_ANSWER_OUTPUT_MAX_BYTES) return answer;
      const table = parseOnce(answer.stdout);
      if ('kind' in table) return table;
      return { kind: 'rows', rows: rowsForSupervisor(table, supervisorPid) };
    },
  };
}
