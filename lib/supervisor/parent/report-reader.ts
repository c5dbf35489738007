/**
 * Reads the supervisor's report pipe (fd 2): JSON lines, bounded as a whole by REPORT_PIPE_MAX_BYTES (bytes
 * past it are drained and ignored). Nothing after the final `cleanup` line is taken.
 */
import type { Readable } from 'node:stream';
import { createLineSplitter } from '../../util/line-splitter.ts';
import { PROBE_LINE_MAX_BYTES, REPORT_MAX_BYTES, REPORT_PIPE_MAX_BYTES, type ReportMessage } from '../protocol.ts';
import { parseReportLine } from '../report-parse.ts';

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

export function readReports(stream: Readable, onMessage: (message: ReportMessage) => void, onEnd: () => void): ReportReader {
  let bytes = 0;
  let final = false;
  let ended = false;
  let unparsed = '';
  const splitter = createLineSplitter({
    maxLineBytes: Math.max(REPORT_MAX_BYTES, PROBE_LINE_MAX_BYTES),
    onLine: (frame) => {
      const text = frame.toString('utf8');
      const message = parseReportLine(text);
      if (message === null) unparsed = keepEnd(`${unparsed}${text}\n`);
      if (message === null || final) return;
      final = message.type === 'cleanup';
      onMessage(message);
    },
    onOversize: () => {},
  });
  stream.on('data', (chunk: Buffer) => {
    const room = REPORT_PIPE_MAX_BYTES - bytes;
    if (room > 0) splitter.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    bytes += chunk.length;
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
