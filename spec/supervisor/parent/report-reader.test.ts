/** The report pipe's reader: the run's lines bounded by REPORT_PIPE_MAX_BYTES, table requests beside them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { readReports } from '../../../lib/supervisor/parent/report-reader.ts';
import { REPORT_PIPE_MAX_BYTES, type ReportMessage } from '../../../lib/supervisor/protocol.ts';
import { formatTableRequest } from '../../../lib/supervisor/table-wire.ts';

const EXIT = '{"type":"exit","code":0,"signal":null}\n';

function read(take: (id: number) => boolean): {
  stream: PassThrough;
  messages: ReportMessage[];
  requests: number[];
  ended: Promise<void>;
  tail: () => string;
} {
  const stream = new PassThrough();
  const messages: ReportMessage[] = [];
  const requests: number[] = [];
  let onEnd = (): void => {};
  const ended = new Promise<void>((resolve) => {
    onEnd = resolve;
  });
  const reader = readReports(stream, {
    onMessage: (m) => messages.push(m),
    onTableRequest: ({ id }) => {
      requests.push(id);
      return take(id);
    },
    onEnd: () => {
      reader.end();
      onEnd();
    },
  });
  return { stream, messages, requests, ended, tail: () => reader.unparsedTail() };
}

/** A line of junk of exactly `bytes` bytes with its newline. */
const junk = (bytes: number): string => `${'x'.repeat(bytes - 1)}\n`;

test('the run lines stop at REPORT_PIPE_MAX_BYTES: a line ending exactly there is read, one byte more is not', async () => {
  const r = read(() => true);
  r.stream.write(junk(REPORT_PIPE_MAX_BYTES - EXIT.length));
  r.stream.end(EXIT);
  await r.ended;
  assert.deepEqual(r.messages, [{ type: 'exit', code: 0, signal: null }]);
  const over = read(() => true);
  over.stream.write(junk(REPORT_PIPE_MAX_BYTES - EXIT.length + 1));
  over.stream.end(EXIT);
  await over.ended;
  assert.deepEqual(over.messages, []);
});

test('requests the server takes do not count toward the bound; refused ones do, and neither is a report', async () => {
  const taken = read(() => true);
  const many = Math.ceil(REPORT_PIPE_MAX_BYTES / formatTableRequest(0, 0).length) + 10;
  for (let id = 0; id < many; id++) taken.stream.write(formatTableRequest(id, 0));
  taken.stream.end(EXIT);
  await taken.ended;
  assert.equal(taken.requests.length, many);
  assert.deepEqual(taken.messages, [{ type: 'exit', code: 0, signal: null }], 'the run line after them is still read');
  assert.equal(taken.tail(), '', 'a request is not unparsed text');

  const refused = read(() => false);
  const request = formatTableRequest(1, 0);
  refused.stream.write(request);
  refused.stream.write(junk(REPORT_PIPE_MAX_BYTES - EXIT.length - request.length + 1));
  refused.stream.end(EXIT);
  await refused.ended;
  assert.deepEqual(refused.requests, [1]);
  assert.deepEqual(refused.messages, [], 'the refused request took the byte the exit line needed');
});

test('nothing after the final cleanup line is taken, a table request included', async () => {
  const r = read(() => true);
  const cleanup = {
    type: 'cleanup',
    confirmed: true,
    survivors: [],
    survivors_omitted: 0,
    steps: [],
    error: null,
    proof: 'process_scan',
    stderr_tail: '',
    stderr_bytes: 0,
  };
  r.stream.write(formatTableRequest(0, 0));
  r.stream.write(`${JSON.stringify(cleanup)}\n`);
  r.stream.end(formatTableRequest(1, 0));
  await r.ended;
  assert.deepEqual(r.requests, [0]);
  assert.deepEqual(
    r.messages.map((m) => m.type),
    ['cleanup'],
  );
});
