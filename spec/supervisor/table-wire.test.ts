/** The table exchange on the wire: a request and its answer, both strictly validated, at their bounds. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatTableAnswer, formatTableRequest, parseTableAnswer, parseTableRequest } from '../../lib/supervisor/table-wire.ts';
import { parseControlLine } from '../../lib/supervisor/child/control.ts';
import {
  CONTROL_LINE_MAX_BYTES,
  TABLE_ANSWER_LINE_MAX_BYTES,
  TABLE_FAILURE_MESSAGE_MAX_CHARS,
  TABLE_OUTPUT_MAX_BYTES,
  TABLE_REQUEST_LINE_MAX_BYTES,
  TABLE_REQUEST_WAIT_MAX_MS,
  type TableAnswer,
} from '../../lib/supervisor/protocol.ts';
import { PS_MAX_OUTPUT_BYTES } from '../../lib/process/ps-source.ts';
import { MAX_PID, psFailure, type PsRow } from '../../lib/process/ps-table.ts';

const control = (line: string): ReturnType<typeof parseControlLine> => parseControlLine(line.replace(/\n$/, ''));

test('an answer carries any table the supervisor could have read itself, and fits a control line', () => {
  assert.equal(TABLE_OUTPUT_MAX_BYTES, PS_MAX_OUTPUT_BYTES);
  assert.ok(TABLE_ANSWER_LINE_MAX_BYTES <= CONTROL_LINE_MAX_BYTES);
});

test('a table request round-trips; anything else, or longer than its bound, is no request', () => {
  assert.deepEqual(parseTableRequest(formatTableRequest(0, 0).trimEnd()), { type: 'table_request', id: 0, waitMs: 0 });
  const largest = formatTableRequest(Number.MAX_SAFE_INTEGER, TABLE_REQUEST_WAIT_MAX_MS);
  assert.deepEqual(parseTableRequest(largest.trimEnd()), {
    type: 'table_request',
    id: Number.MAX_SAFE_INTEGER,
    waitMs: TABLE_REQUEST_WAIT_MAX_MS,
  });
  assert.ok(Buffer.byteLength(largest) <= TABLE_REQUEST_LINE_MAX_BYTES);
  const bad = [
    'not json',
    '[]',
    '{"type":"table_request","wait_ms":0}',
    '{"type":"table_request","id":1}',
    '{"type":"table_request","id":-1,"wait_ms":0}',
    '{"type":"table_request","id":1.5,"wait_ms":0}',
    '{"type":"table_request","id":"1","wait_ms":0}',
    '{"type":"table_request","id":1,"wait_ms":-1}',
    `{"type":"table_request","id":1,"wait_ms":${TABLE_REQUEST_WAIT_MAX_MS + 1}}`,
    '{"type":"table_request","id":1,"wait_ms":0,"extra":0}',
    '{"type":"table","id":1,"wait_ms":0}',
    '{"type":"spawned","pid":1,"start":"1","pgid":1}',
  ];
  for (const b of bad) assert.equal(parseTableRequest(b), null, b);
  // At the bound: padding inside the JSON keeps it a request up to TABLE_REQUEST_LINE_MAX_BYTES, not one byte more.
  const plain = '{"type":"table_request","id":1,"wait_ms":0}';
  const atBound = plain.replace('}', `${' '.repeat(TABLE_REQUEST_LINE_MAX_BYTES - plain.length)}}`);
  assert.equal(Buffer.byteLength(atBound), TABLE_REQUEST_LINE_MAX_BYTES);
  assert.deepEqual(parseTableRequest(atBound), { type: 'table_request', id: 1, waitMs: 0 });
  assert.equal(parseTableRequest(atBound.replace('}', ' }')), null);
});

test('an answer round-trips through the supervisor control parser: output bytes, a failure, a refusal', () => {
  const answers: TableAnswer[] = [
    { kind: 'output', stdout: Buffer.from('    1     0     1 Ss   Thu Dec  3 08:01:15 2026     /sbin/launchd é\n') },
    { kind: 'output', stdout: Buffer.from([0xff, 0x00, 0x0a]) },
    psFailure('ps_output_invalid', 'line 3 is not a process row: an impossible stat', 3),
    psFailure('ps_not_found', 'not found on PATH'),
    { kind: 'refused', reason: 'too_many_pending' },
  ];
  for (const [i, answer] of answers.entries())
    assert.deepEqual(control(formatTableAnswer(i, answer)), { type: 'table', id: i, answer }, JSON.stringify(answer));
});

test('an output at TABLE_OUTPUT_MAX_BYTES travels; one byte more is answered as the failure that says so', () => {
  const atBound = Buffer.alloc(TABLE_OUTPUT_MAX_BYTES, 0x41);
  const line = formatTableAnswer(5, { kind: 'output', stdout: atBound });
  assert.ok(Buffer.byteLength(line) <= TABLE_ANSWER_LINE_MAX_BYTES);
  const parsed = control(line);
  assert.equal(parsed?.type === 'table' && parsed.answer.kind === 'output' ? parsed.answer.stdout.equals(atBound) : false, true);
  const over = control(formatTableAnswer(5, { kind: 'output', stdout: Buffer.alloc(TABLE_OUTPUT_MAX_BYTES + 1, 0x41) }));
  assert.equal(over?.type, 'table');
  const answer = over?.type === 'table' ? over.answer : null;
  assert.equal(answer?.kind === 'failure' ? answer.code : null, 'ps_output_too_large');
  assert.match(answer?.kind === 'failure' ? answer.message : '', /^ps: .*TABLE_OUTPUT_MAX_BYTES/);
  // Crafted past the bound (a server that did not format it): refused whole, never a table.
  const tooLong = Buffer.alloc(TABLE_OUTPUT_MAX_BYTES + 3, 0x41).toString('base64');
  assert.equal(control(JSON.stringify({ type: 'table', id: 5, kind: 'output', ps_b64: tooLong })), null);
});

test('a failure message is cut to TABLE_FAILURE_MESSAGE_MAX_CHARS and still parses', () => {
  const long = psFailure('ps_exit_nonzero', 'x'.repeat(2 * TABLE_FAILURE_MESSAGE_MAX_CHARS));
  const parsed = control(formatTableAnswer(1, long));
  const message = parsed?.type === 'table' && parsed.answer.kind === 'failure' ? parsed.answer.message : '';
  assert.equal(message.length, TABLE_FAILURE_MESSAGE_MAX_CHARS);
  assert.ok(message.startsWith('ps: x') && message.endsWith('…'));
});

test('an answer off-shape in any way is a malformed control line, never a table', () => {
  const ok = { type: 'table', id: 1, kind: 'output', ps_b64: Buffer.from('x\n').toString('base64') };
  const failure = { type: 'table', id: 1, kind: 'failure', code: 'ps_timeout', message: 'ps: slow', line: null };
  const bad: unknown[] = [
    { ...ok, id: -1 },
    { ...ok, id: '1' },
    { ...ok, id: undefined },
    { ...ok, kind: 'table' },
    { ...ok, ps_b64: 'not base64!' },
    { ...ok, ps_b64: 'abc' },
    { ...ok, ps_b64: 7 },
    { ...ok, rows: [] },
    { ...ok, ps_b64: undefined },
    { ...failure, code: 'ps_bored' },
    { ...failure, message: 'slow' },
    { ...failure, message: `ps: ${'x'.repeat(TABLE_FAILURE_MESSAGE_MAX_CHARS)}` },
    { ...failure, line: 0 },
    { ...failure, line: '2' },
    { ...failure, line: undefined },
    { ...failure, tool: 'ps' },
    { type: 'table', id: 1, kind: 'refused', reason: 'whim' },
    { type: 'table', id: 1, kind: 'refused' },
  ];
  assert.notEqual(control(JSON.stringify(ok)), null);
  assert.notEqual(control(JSON.stringify(failure)), null);
  for (const b of bad) assert.equal(control(JSON.stringify(b)), null, JSON.stringify(b));
  // The line's own size is checked too, whatever its content.
  assert.equal(parseTableAnswer(ok, TABLE_ANSWER_LINE_MAX_BYTES + 1), null);
  assert.notEqual(parseTableAnswer(ok, TABLE_ANSWER_LINE_MAX_BYTES), null);
});

test('rows parsed by the server round-trip; a row the supervisor’s own parse would refuse refuses the answer', () => {
  const rows: PsRow[] = [
    { pid: 1, ppid: 0, pgid: 1, stat: 'Ss', start: { lstart: '2026-12-03T08:01:15', resolution: 'second' }, command: '/sbin/launchd' },
    { pid: MAX_PID, ppid: 1, pgid: MAX_PID, stat: 'S+', start: null, command: 'sh -c "x y"' },
  ];
  const line = formatTableAnswer(3, { kind: 'rows', rows });
  const parsed = control(line);
  assert.ok(parsed !== null && parsed.type === 'table');
  assert.deepEqual(parsed, { type: 'table', id: 3, answer: { kind: 'rows', rows } });
  assert.deepEqual(control(formatTableAnswer(4, { kind: 'rows', rows: [] })), { type: 'table', id: 4, answer: { kind: 'rows', rows: [] } });
  const good = [1, 0, 1, 'Ss', '2026-12-03T08:01:15', 'launchd'];
  const bad: unknown[][] = [
    [good, good],
    [[MAX_PID + 1, 0, 1, 'S', null, 'x']],
    [[1, -1, 1, 'S', null, 'x']],
    [[1, 0, 1, 'S!', null, 'x']],
    [[1, 0, 1, 'SSSSSSSSS', null, 'x']],
    [[1, 0, 1, 'S', 'Thu Dec  3 08:01:15 2026', 'x']],
    [[1, 0, 1, 'S', null, '']],
    [[1, 0, 1, 'S', null, 'a\nb']],
    [[1, 0, 1, 'S', null]],
    [[1, 0, 1, 'S', null, 'x', 'extra']],
    [{ pid: 1 }],
  ];
  for (const rowsValue of bad) {
    const text = JSON.stringify({ type: 'table', id: 1, kind: 'rows', rows: rowsValue });
    assert.equal(control(text), null, text);
  }
  assert.equal(control(JSON.stringify({ type: 'table', id: 1, kind: 'rows', rows: [good], more: 1 })), null);
  assert.equal(control(JSON.stringify({ type: 'table', id: 1, kind: 'rows', rows: 'x' })), null);
});
