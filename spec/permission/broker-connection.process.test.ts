// One authenticated connection at the broker, over a real Unix socket: what it can make the broker hold.
// The socket path and token are in the environment of everything the run starts, so these are the limits
// of anything that read them: a question is held only while it waits, a run asks its host a bounded number
// of times, and a question id has a bounded length.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { onConnection, type BrokerState, type ConnectionView } from '../../lib/permission/broker-connection.ts';
import {
  createQuestionBook,
  decide,
  MAX_PENDING_QUESTIONS,
  MAX_QUESTIONS_PER_RUN,
  type DecidedQuestion,
  type PermissionQuestion,
} from '../../lib/permission/broker-questions.ts';
import { MAX_BRIDGE_ID_CHARS } from '../../lib/permission/wire.ts';
import { createManualClock } from '../helpers/manual-clock.ts';
import { pollUntil } from '../helpers/poll.ts';

const base = mkdtempSync(join(tmpdir(), 'crm-conn-spec-'));
after(() => rmSync(base, { recursive: true, force: true }));

const BOUND_MS = 60_000;
const TOKEN = 'a'.repeat(64);
let serial = 0;

interface Harness {
  readonly b: BrokerState;
  readonly clock: ReturnType<typeof createManualClock>;
  readonly questions: PermissionQuestion[];
  readonly decisions: DecidedQuestion[];
  /** Dials, authenticates, and resolves once the broker serves the connection. */
  dial(): Promise<{ socket: Socket; view: ConnectionView; lines: () => string[] }>;
  close(): Promise<void>;
}

async function harness(): Promise<Harness> {
  const clock = createManualClock();
  const b: BrokerState = {
    book: createQuestionBook(clock),
    clock,
    boundMs: BOUND_MS,
    hex: (n) => randomBytes(n).toString('hex'),
    token: TOKEN,
    sockets: new Set(),
    closed: false,
  };
  const questions: PermissionQuestion[] = [];
  const decisions: DecidedQuestion[] = [];
  b.book.questionListeners.push((q) => questions.push(q));
  b.book.decisionListeners.push((d) => decisions.push(d));
  const views: ConnectionView[] = [];
  const server = createServer((socket) => {
    const view = onConnection(b, socket);
    if (view !== null) views.push(view);
  });
  const path = join(base, `b${(serial += 1)}.sock`);
  server.listen(path);
  await once(server, 'listening');
  const clients: Socket[] = [];
  return {
    b,
    clock,
    questions,
    decisions,
    async dial() {
      const served = views.length;
      const socket = connect(path);
      clients.push(socket);
      socket.on('error', () => {});
      let received = '';
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('utf8');
      });
      await once(socket, 'connect');
      socket.write(`${JSON.stringify({ t: 'hello', token: TOKEN })}\n`);
      const view = await pollUntil('the broker to serve the connection', () => views[served], { timeoutMs: 10_000, intervalMs: 1 });
      return { socket, view, lines: () => received.split('\n').filter((l) => l !== '') };
    },
    async close() {
      for (const socket of clients) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** Resolves when the socket closes; fails the spec past the poll deadline instead of hanging the file. */
async function closed(socket: Socket): Promise<void> {
  let gone = socket.closed;
  socket.once('close', () => {
    gone = true;
  });
  await pollUntil('the broker to close the connection', () => gone, { timeoutMs: 10_000, intervalMs: 1 });
}

const askLine = (id: string): string => JSON.stringify({ t: 'ask', id, tool_name: 'Bash', input: { id }, tool_use_id: `tu_${id}` });
const withdrawLine = (id: string): string => JSON.stringify({ t: 'withdraw', id });

describe('what one connection makes the broker hold', () => {
  it('a withdrawn, answered, timed-out or overflowing question is no longer held by its connection', async () => {
    const h = await harness();
    try {
      const { socket, view, lines } = await h.dial();
      // Many ask/withdraw pairs, more than ever wait at once: the connection never holds more than waits.
      const pairs = 3 * MAX_PENDING_QUESTIONS;
      let mostHeld = 0;
      h.b.book.decisionListeners.push(() => {
        mostHeld = Math.max(mostHeld, view.heldQuestions());
      });
      const batch: string[] = [];
      for (let i = 0; i < pairs; i += 1) batch.push(askLine(`w${i}`), withdrawLine(`w${i}`));
      socket.write(`${batch.join('\n')}\n`);
      await pollUntil('every pair withdrawn', () => h.decisions.length === pairs, { timeoutMs: 10_000, intervalMs: 1 });
      assert.ok(h.decisions.every((d) => d.decided_by === 'withdrawn'));
      assert.equal(view.heldQuestions(), 0, 'withdrawn questions are not held');
      assert.ok(mostHeld <= MAX_PENDING_QUESTIONS, `held ${mostHeld}`);

      // Answered by the host (the one decision answer() makes).
      socket.write(`${askLine('a1')}\n`);
      await pollUntil('the question a1', () => h.questions.find((q) => q.tool_use_id === 'tu_a1'), { timeoutMs: 10_000, intervalMs: 1 });
      assert.equal(view.heldQuestions(), 1);
      decide(h.b.book, h.questions.at(-1)!.question_id, 'allow', '', 'host');
      assert.equal(view.heldQuestions(), 0, 'an answered question is not held');

      // No answer within the bound.
      socket.write(`${askLine('t1')}\n`);
      await pollUntil('the question t1', () => h.questions.find((q) => q.tool_use_id === 'tu_t1'), { timeoutMs: 10_000, intervalMs: 1 });
      h.clock.advance(BOUND_MS);
      assert.equal(h.decisions.at(-1)?.decided_by, 'timeout');
      assert.equal(view.heldQuestions(), 0, 'a timed-out question is not held');

      // One more than may wait: the last is denied at once and never held.
      const flood: string[] = [];
      for (let i = 0; i <= MAX_PENDING_QUESTIONS; i += 1) flood.push(askLine(`o${i}`));
      socket.write(`${flood.join('\n')}\n`);
      await pollUntil('the overflow decision', () => lines().some((l) => l.includes(`"o${MAX_PENDING_QUESTIONS}"`)), {
        timeoutMs: 10_000,
        intervalMs: 1,
      });
      assert.equal(h.decisions.at(-1)?.decided_by, 'overflow');
      assert.equal(view.heldQuestions(), MAX_PENDING_QUESTIONS);
      socket.destroy();
      await pollUntil('the closed connection to hold nothing', () => view.heldQuestions() === 0, { timeoutMs: 10_000, intervalMs: 1 });
      assert.equal(h.b.book.waiting.size, 0);
    } finally {
      await h.close();
    }
  });

  it(`a run puts at most ${MAX_QUESTIONS_PER_RUN} questions to its host, over all its connections; later asks are denied at once`, async () => {
    const h = await harness();
    try {
      const first = await h.dial();
      const batch: string[] = [];
      for (let i = 0; i < MAX_QUESTIONS_PER_RUN; i += 1) batch.push(askLine(`q${i}`), withdrawLine(`q${i}`));
      batch.push(askLine('over'));
      first.socket.write(`${batch.join('\n')}\n`);
      await pollUntil('the denial past the bound', () => first.lines().length > 0, { timeoutMs: 10_000, intervalMs: 1 });
      assert.deepEqual(JSON.parse(first.lines()[0]!), {
        t: 'decision',
        id: 'over',
        behavior: 'deny',
        message: `claude-run-mcp: more than ${MAX_QUESTIONS_PER_RUN} questions asked in this run; denied.`,
      });
      assert.equal(h.questions.length, MAX_QUESTIONS_PER_RUN, 'the host was asked exactly the bound');
      assert.equal(h.decisions.at(-1)?.decided_by, 'overflow');
      assert.equal(first.view.heldQuestions(), 0);
      // A new connection does not start a new count.
      const second = await h.dial();
      second.socket.write(`${askLine('again')}\n`);
      await pollUntil('the second denial', () => second.lines().length > 0, { timeoutMs: 10_000, intervalMs: 1 });
      assert.match(second.lines()[0]!, /questions asked in this run; denied/);
      assert.equal(h.questions.length, MAX_QUESTIONS_PER_RUN);
      assert.equal(second.view.heldQuestions(), 0);
    } finally {
      await h.close();
    }
  });

  it(`a question id longer than ${MAX_BRIDGE_ID_CHARS} characters closes the connection; one at the bound is asked`, async () => {
    const h = await harness();
    try {
      const atBound = 'i'.repeat(MAX_BRIDGE_ID_CHARS);
      const { socket, view } = await h.dial();
      socket.write(`${askLine(atBound)}\n`);
      await pollUntil('the question at the bound', () => h.questions.length === 1, { timeoutMs: 10_000, intervalMs: 1 });
      assert.equal(view.heldQuestions(), 1);
      const closing = closed(socket);
      socket.write(`${askLine(`${atBound}i`)}\n`);
      await closing;
      assert.equal(h.questions.length, 1, 'the over-long id never became a question');
      await pollUntil('the closed connection to hold nothing', () => view.heldQuestions() === 0, { timeoutMs: 10_000, intervalMs: 1 });
      // A withdraw with an over-long id closes the connection as well.
      const other = await h.dial();
      const otherClosing = closed(other.socket);
      other.socket.write(`${withdrawLine('w'.repeat(MAX_BRIDGE_ID_CHARS + 1))}\n`);
      await otherClosing;
      assert.equal(h.decisions.at(-1)?.decided_by, 'closed', 'the first connection’s question was denied when it closed');
    } finally {
      await h.close();
    }
  });
});
