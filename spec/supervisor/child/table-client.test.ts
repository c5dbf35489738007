/** The supervisor's table client: served by the server, else its own ps (EOF, late, refused, too many waiting). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTableClient, TABLE_ANSWER_TIMEOUT_MS } from '../../../lib/supervisor/child/table-client.ts';
import { TABLE_REQUEST_WAIT_MAX_MS, TABLE_REQUESTS_PENDING_MAX, type TableAnswer } from '../../../lib/supervisor/protocol.ts';
import { parseTableRequest } from '../../../lib/supervisor/table-wire.ts';
import { psFailure, type PsTableResult } from '../../../lib/process/ps-table.ts';
import { createManualClock } from '../../helpers/manual-clock.ts';

const ROW = '    1     0     1 Ss   Thu Dec  3 08:01:15 2026     /sbin/launchd\n';
const OWN: PsTableResult = { kind: 'table', rows: [] };

function setup(): {
  client: ReturnType<typeof createTableClient>;
  clock: ReturnType<typeof createManualClock>;
  sent: number[];
  waits: number[];
  ownReads: () => number;
} {
  const clock = createManualClock();
  const sent: number[] = [];
  const waits: number[] = [];
  let own = 0;
  const client = createTableClient({
    send: (line) => {
      assert.ok(line.endsWith('\n'));
      const request = parseTableRequest(line.trimEnd());
      assert.ok(request, `a table request line: ${line}`);
      sent.push(request.id);
      waits.push(request.waitMs);
    },
    readOwnTable: () => {
      own++;
      return Promise.resolve(OWN);
    },
    clock,
  });
  return { client, clock, sent, waits, ownReads: () => own };
}

const answer = (id: number, a: TableAnswer): { type: 'table'; id: number; answer: TableAnswer } => ({ type: 'table', id, answer: a });

test("the server's output is parsed as the supervisor's own ps output would be; no ps of its own runs", async () => {
  const { client, clock, sent, ownReads } = setup();
  const read = client.readTable();
  assert.deepEqual(sent, [0]);
  assert.equal(client.onAnswer(answer(0, { kind: 'output', stdout: Buffer.from(ROW) })), true);
  const result = await read;
  assert.equal(result.kind, 'table');
  assert.deepEqual(result.kind === 'table' ? result.rows.map((r) => r.pid) : [], [1]);
  assert.equal(ownReads(), 0);
  assert.equal(clock.pending(), 0, 'the answer timer is gone');
  // Garbage from the server is never a table: the same failure the supervisor's own parse gives.
  const second = client.readTable();
  client.onAnswer(answer(1, { kind: 'output', stdout: Buffer.from('hello\n') }));
  const refused = await second;
  assert.equal(refused.kind === 'failure' ? refused.code : null, 'ps_output_invalid');
});

test("a failure of the server's ps is the read's failure (it names ps); a refusal makes the supervisor run ps", async () => {
  const { client, ownReads } = setup();
  const failure = psFailure('ps_killed', 'was ended by SIGKILL');
  const read = client.readTable();
  client.onAnswer(answer(0, failure));
  assert.deepEqual(await read, failure);
  const next = client.readTable();
  client.onAnswer(answer(1, { kind: 'refused', reason: 'too_many_pending' }));
  assert.equal(await next, OWN);
  assert.equal(ownReads(), 1);
});

test('no answer within TABLE_ANSWER_TIMEOUT_MS: the supervisor runs ps; the late answer is dropped, not an error', async () => {
  const { client, clock, ownReads } = setup();
  const read = client.readTable();
  clock.advance(TABLE_ANSWER_TIMEOUT_MS - 1);
  assert.equal(ownReads(), 0);
  clock.advance(1);
  assert.equal(ownReads(), 1);
  assert.equal(await read, OWN);
  assert.equal(client.onAnswer(answer(0, { kind: 'output', stdout: Buffer.from(ROW) })), true);
  assert.equal(ownReads(), 1);
});

test('control EOF: a waiting read and every later one run ps at once, with no request sent', async () => {
  const { client, clock, sent, ownReads } = setup();
  const waiting = client.readTable();
  client.onControlEnd();
  assert.equal(await waiting, OWN);
  assert.equal(clock.pending(), 0);
  assert.equal(await client.readTable(), OWN);
  assert.deepEqual(sent, [0], 'nothing asked after EOF');
  assert.equal(ownReads(), 2);
});

test('at most TABLE_REQUESTS_PENDING_MAX unanswered requests (late ones included); past them the supervisor runs ps', async () => {
  const { client, clock, sent, ownReads } = setup();
  const reads = Array.from({ length: TABLE_REQUESTS_PENDING_MAX }, () => client.readTable());
  assert.equal(sent.length, TABLE_REQUESTS_PENDING_MAX);
  assert.equal(await client.readTable(), OWN, 'one more runs ps itself');
  assert.equal(sent.length, TABLE_REQUESTS_PENDING_MAX);
  clock.advance(TABLE_ANSWER_TIMEOUT_MS);
  await Promise.all(reads);
  assert.equal(await client.readTable(), OWN, 'timed out but unanswered: still held by the server');
  assert.equal(sent.length, TABLE_REQUESTS_PENDING_MAX);
  client.onAnswer(answer(0, { kind: 'output', stdout: Buffer.from(ROW) }));
  const asked = client.readTable();
  assert.equal(sent.length, TABLE_REQUESTS_PENDING_MAX + 1, 'a late answer frees its place');
  client.onAnswer(answer(TABLE_REQUESTS_PENDING_MAX, { kind: 'output', stdout: Buffer.from(ROW) }));
  assert.equal((await asked).kind, 'table');
  assert.equal(ownReads(), 2 + TABLE_REQUESTS_PENDING_MAX);
});

test('an answer to a request never made, or made and answered already, is a protocol error', async () => {
  const { client } = setup();
  assert.equal(client.onAnswer(answer(0, { kind: 'output', stdout: Buffer.from(ROW) })), false);
  const read = client.readTable();
  assert.equal(client.onAnswer(answer(0, { kind: 'output', stdout: Buffer.from(ROW) })), true);
  await read;
  assert.equal(client.onAnswer(answer(0, { kind: 'output', stdout: Buffer.from(ROW) })), false);
  assert.equal(client.onAnswer(answer(7, { kind: 'output', stdout: Buffer.from(ROW) })), false);
});

test('a read may offer to wait for a shared ps: its timeout counts from the end of that wait', async () => {
  const { client, clock, waits, ownReads } = setup();
  const read = client.readTable(2000);
  assert.deepEqual(waits, [2000]);
  clock.advance(2000 + TABLE_ANSWER_TIMEOUT_MS - 1);
  assert.equal(ownReads(), 0);
  clock.advance(1);
  assert.equal(await read, OWN);
  client.readTable(TABLE_REQUEST_WAIT_MAX_MS + 1);
  assert.equal(waits.at(-1), TABLE_REQUEST_WAIT_MAX_MS, 'never more than the wire allows');
});

test('hurry: a read waiting on a shared ps is asked again with no wait, and the new answer settles it', async () => {
  const { client, sent, waits, ownReads } = setup();
  const read = client.readTable(2000);
  client.hurry();
  assert.deepEqual(sent, [0, 1]);
  assert.deepEqual(waits, [2000, 0]);
  client.onAnswer(answer(1, { kind: 'output', stdout: Buffer.from(ROW) }));
  assert.equal((await read).kind, 'table');
  assert.equal(client.onAnswer(answer(0, { kind: 'output', stdout: Buffer.from(ROW) })), true, 'the first answer is late, not an error');
  assert.equal(ownReads(), 0);
  // Past the bound the hurried read runs ps itself.
  const reads = [client.readTable(2000), client.readTable(2000)];
  client.hurry();
  assert.equal(sent.length, 4, 'nothing more asked: two are held');
  assert.deepEqual(await Promise.all(reads), [OWN, OWN]);
});

test("rows the server parsed are the read's table as they are; no ps of its own runs", async () => {
  const { client, ownReads } = setup();
  const read = client.readTable();
  const rows = [{ pid: 1, ppid: 0, pgid: 1, stat: 'Ss', start: null, command: '/sbin/launchd' }];
  assert.equal(client.onAnswer(answer(0, { kind: 'rows', rows })), true);
  assert.deepEqual(await read, { kind: 'table', rows });
  assert.equal(ownReads(), 0);
});
