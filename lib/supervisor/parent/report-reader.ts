/**
 * Reads the supervisor's report pipe (fd 2): JSON lines, bounded as a whole by REPORT_PIPE_MAX_BYTES (lines
 * past it are drained and ignored). Nothing after the final `cleanup` line is taken. A table request the
 * server accepts does not count toward the bound (a long run asks many times, and each waits for its answer
 * before the next: TABLE_REQUESTS_PENDING_MAX); a refused one does.
 */
import type { Readable } from 'node:stream';
import { createLineSplitter } from '../../util/line-splitter.ts';
import { PROBE_LINE_MAX_BYTES, REPORT_MAX_BYTES, REPORT_PIPE_MAX_BYTES, type ReportMessage, type TableRequest } from '../protocol.ts';
import { parseReportLine } from '../report-parse.ts';
import { parseTableRequest } from '../table-wire.ts';

/** How much of the pipe's unparsable text is kept (its end): an uncaught exception's message and stack. */
export const UNPARSED_TAIL_MAX_BYTES = 2048;

export interface ReportReader {
  /** Takes a last unterminated line, if any. */
  end(): void;
  /** True once the pipe ended (or closed). */
  ended(): boolean;
  /** The end of what was written that is no report line (a crash's text), at most UNPARSED_TAIL_MAX_BYTES. */
  unparsedTail(): string;
}

export interface ReportHandlers {
  readonly onMessage: (message: ReportMessage) => void;
  /** A table request; true when the server took it (it is then not counted toward REPORT_PIPE_MAX_BYTES). */
  readonly onTableRequest: (request: TableRequest) => boolean;
  readonly onEnd: () => void;
}

export function readReports(stream: Readable, handlers: ReportHandlers): ReportReader {
  const { onMessage, onTableRequest, onEnd } = handlers;
  /** Bytes of the lines read so far that count toward the bound. */
  let bytes = 0;
  /** Bytes handed to the splitter, less the taken requests': a line that never ends stops being read too. */
  let pushed = 0;
  let final = false;
  let ended = false;
  let unparsed = '';
  /** True once a counted line would pass REPORT_PIPE_MAX_BYTES: everything after it is drained, unread. */
  const overBound = (lineBytes: number): boolean => {
    bytes += lineBytes;
    return bytes > REPORT_PIPE_MAX_BYTES;
  };
  const splitter = createLineSplitter({
    maxLineBytes: Math.max(REPORT_MAX_BYTES, PROBE_LINE_MAX_BYTES),
    onLine: (frame) => {
      const text = frame.toString('utf8');
      const request = final ? null : parseTableRequest(text);
      if (request !== null && onTableRequest(request)) {
        pushed -= frame.length + 1;
        return;
      }
      if (overBound(frame.length + 1) || request !== null) return;
      const message = parseReportLine(text);
      if (message === null) unparsed = keepEnd(`${unparsed}${text}\n`);
      if (message === null || final) return;
      final = message.type === 'cleanup';
      onMessage(message);
    },
    onOversize: (discardedBytes) => {
      overBound(discardedBytes + 1);
    },
  });
  stream.on('data', (chunk: Buffer) => {
    if (bytes > REPORT_PIPE_MAX_BYTES || pushed > REPORT_PIPE_MAX_BYTES) return;
    pushed += chunk.length;
    splitter.push(chunk);
  });
  const markEnded = (): void => {
    if (ended) return;
    ended = true;
    onEnd();
  };
  stream.once('end', markEnded);
  stream.once('close', markEnded);
  return { end: () => splitter.end(), ended: () => ended, unparsedTail: () => unparsed };
}

function keepEnd(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length <= UNPARSED_TAIL_MAX_BYTES ? text : bytes.subarray(bytes.length - UNPARSED_TAIL_MAX_BYTES).toString('utf8');
}
