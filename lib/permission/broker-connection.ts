/**
 * One bridge connection at the broker (broker.ts): it must authenticate with the run's token first; then it
 * may ask questions and withdraw its own. Its questions are denied when it closes.
 */
import type { Socket } from 'node:net';
import type { Clock } from '../util/clock.ts';
import { createLineSplitter } from '../util/line-splitter.ts';
import type { JsonObject } from '../util/json.ts';
import {
  decide,
  iso,
  MAX_PENDING_QUESTIONS,
  MAX_QUESTIONS_PER_RUN,
  record,
  sendDecision,
  type PermissionQuestion,
  type QuestionBook,
} from './broker-questions.ts';
import { inputPreview, MAX_BRIDGE_LINE_BYTES, parseBridgeMessage, type BridgeMessage } from './wire.ts';

/** Bridge connections of one run alive at once (the CLI respawns a dead bridge; one is normal). */
export const MAX_BRIDGE_CONNECTIONS = 2;
/**
 * A connection that has not authenticated within this is closed: the bridge sends its token as soon as it
 * connects, and an idle connection must not hold one of the MAX_BRIDGE_CONNECTIONS slots for good.
 */
export const BRIDGE_AUTH_TIMEOUT_MS = 3_000;

/** What connections share: the broker's questions, its secret, its bound, and whether it closed. */
export interface BrokerState {
  readonly book: QuestionBook;
  readonly clock: Clock;
  readonly boundMs: number;
  /** `bytes` random bytes as hex. */
  readonly hex: (bytes: number) => string;
  readonly token: string;
  readonly sockets: Set<Socket>;
  closed: boolean;
}

interface Connection {
  readonly socket: Socket;
  authenticated: boolean;
  readonly disposeAuthTimer: () => void;
  /** Bridge id → question id, of its questions still waiting (an entry goes when its question is decided). */
  readonly mine: Map<string, string>;
}

/** What a connection's owner may read of it (specs read how many questions it holds). */
export interface ConnectionView {
  readonly heldQuestions: () => number;
}

type AskMessage = Extract<BridgeMessage, { t: 'ask' }>;

/** Serves one accepted socket; null when it was refused (broker closed, or every slot taken). */
export function onConnection(b: BrokerState, socket: Socket): ConnectionView | null {
  if (b.closed || b.sockets.size >= MAX_BRIDGE_CONNECTIONS) {
    socket.destroy();
    return null;
  }
  b.sockets.add(socket);
  const c: Connection = {
    socket,
    authenticated: false,
    // Decided after the loop's next poll: a token that arrived while this process was not scheduled is read
    // before the timer can close its connection.
    disposeAuthTimer: b.clock.setTimeout(
      () =>
        setImmediate(() => {
          if (!c.authenticated) socket.destroy();
        }),
      BRIDGE_AUTH_TIMEOUT_MS,
    ),
    mine: new Map(),
  };
  const lines = createLineSplitter({
    maxLineBytes: MAX_BRIDGE_LINE_BYTES,
    onLine: (frame) => {
      onBridgeLine(b, c, frame);
    },
    onOversize: () => {
      socket.destroy();
    },
  });
  socket.on('data', (chunk: Buffer) => lines.push(chunk));
  socket.on('error', () => {});
  socket.on('close', () => {
    c.disposeAuthTimer();
    b.sockets.delete(socket);
    // The bridge is gone: its questions can no longer be answered; it has denied them itself.
    for (const questionId of [...c.mine.values()]) decide(b.book, questionId, 'deny', '', 'closed');
  });
  return { heldQuestions: () => c.mine.size };
}

function onBridgeLine(b: BrokerState, c: Connection, frame: Buffer): void {
  const message = parseBridgeMessage(frame.toString('utf8'));
  if (message === null || (!c.authenticated && message.t !== 'hello')) {
    c.socket.destroy();
    return;
  }
  switch (message.t) {
    case 'hello':
      if (c.authenticated || !sameToken(message.token, b.token)) {
        c.socket.destroy();
        return;
      }
      c.authenticated = true;
      c.disposeAuthTimer();
      return;
    case 'ask':
      onAsk(b, c, message);
      return;
    case 'withdraw': {
      const questionId = c.mine.get(message.id);
      if (questionId !== undefined) decide(b.book, questionId, 'deny', '', 'withdrawn');
      return;
    }
  }
}

function onAsk(b: BrokerState, c: Connection, message: AskMessage): void {
  if (c.mine.has(message.id)) {
    c.socket.destroy();
    return;
  }
  const question = questionOf(b, message);
  const overflow =
    b.book.waiting.size >= MAX_PENDING_QUESTIONS
      ? `more than ${MAX_PENDING_QUESTIONS} questions waiting`
      : b.book.asked >= MAX_QUESTIONS_PER_RUN
        ? `more than ${MAX_QUESTIONS_PER_RUN} questions asked in this run`
        : null;
  if (overflow !== null) {
    sendDecision(c.socket, { t: 'decision', id: message.id, behavior: 'deny', message: `claude-run-mcp: ${overflow}; denied.` });
    record(b.book, question, 'deny', 'overflow');
    return;
  }
  b.book.asked += 1;
  c.mine.set(message.id, question.question_id);
  const disposeTimer = b.clock.setTimeout(() => {
    decide(
      b.book,
      question.question_id,
      'deny',
      `claude-run-mcp: no answer from the host within ${Math.round(b.boundMs / 1000)} s; denied.`,
      'timeout',
    );
  }, b.boundMs);
  const dispose = (): void => {
    disposeTimer();
    c.mine.delete(message.id);
  };
  b.book.waiting.set(question.question_id, { question, socket: c.socket, bridgeId: message.id, dispose });
  for (const listener of b.book.questionListeners) listener(question);
}

function questionOf(b: BrokerState, message: AskMessage): PermissionQuestion {
  const now = b.clock.wallNow();
  const preview = inputPreview(message.input as JsonObject);
  return {
    question_id: `pq_${b.hex(12)}`,
    tool_name: message.tool_name.slice(0, 256),
    tool_use_id: message.tool_use_id.slice(0, 256),
    input: preview.text,
    input_bytes: preview.bytes,
    input_truncated: preview.truncated,
    asked_at: iso(now),
    expires_at: iso(now + b.boundMs),
  };
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && process.getBuiltinModule('node:crypto').timingSafeEqual(a, b);
}
