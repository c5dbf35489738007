/**
 * The broker of one run that asks its host: a Unix socket in a fresh private (0700) directory that only
 * the run's bridge is told about, the run's pending questions, and their answers. Questions come only
 * from the socket; answers come only from the adapter's own MCP connection (answer()), never from the
 * socket, so a nested model cannot answer its own question. Every question is decided within the bound:
 * no answer, a closed broker (cancel, end of run, adapter exit) or a withdrawn call is a denial.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:net';
import { join } from 'node:path';
import type { Clock } from '../util/clock.ts';
import { ToolError } from '../tool-errors.ts';
import { onConnection, type BrokerState } from './broker-connection.ts';
import {
  createQuestionBook,
  decide,
  iso,
  type DecidedQuestion,
  type DecisionSource,
  type PermissionQuestion,
  type QuestionBook,
} from './broker-questions.ts';
import { PRIVATE_DIR_PREFIX } from './private-dir.ts';
import { MAX_DENY_REASON_CHARS } from './wire.ts';

export { BRIDGE_AUTH_TIMEOUT_MS, MAX_BRIDGE_CONNECTIONS } from './broker-connection.ts';
export { MAX_DECIDED_QUESTIONS, MAX_PENDING_QUESTIONS, MAX_QUESTIONS_PER_RUN } from './broker-questions.ts';
export type { DecidedQuestion, DecisionSource, PermissionQuestion } from './broker-questions.ts';

/**
 * The longest Unix socket path Linux can bind: sun_path holds 108 bytes, its terminating NUL included.
 * libuv cuts a longer path and binds what is left, outside the private directory.
 */
export const MAX_UNIX_SOCKET_PATH_BYTES = 107;
// One letter: the whole path must fit a Unix socket path (107 bytes on Linux, 103 on macOS) under the TMPDIR.
const SOCKET_NAME = 's';
/** mkdtemp appends this many characters to the prefix. */
const MKDTEMP_SUFFIX_CHARS = 6;

export interface HostAnswer {
  readonly behavior: 'allow' | 'deny';
  readonly reason?: string | undefined;
}

export interface PermissionBroker {
  readonly socketPath: string;
  readonly token: string;
  readonly boundMs: number;
  pending(): readonly PermissionQuestion[];
  decided(): { readonly questions: readonly DecidedQuestion[]; readonly dropped: number };
  /** Called once per new question (for elicitation or input_required); the answer still goes through answer(). */
  onQuestion(listener: (question: PermissionQuestion) => void): void;
  /** Called once per decided question, whoever decided it (to withdraw a question shown elsewhere). */
  onDecision(listener: (decided: DecidedQuestion) => void): void;
  /**
   * Answers a pending question; permission_question_not_pending when it is decided, withdrawn or unknown.
   * An answer to a question decided without the person is recorded as its late_answer before the refusal.
   */
  answer(questionId: string, answer: HostAnswer): DecidedQuestion;
  /** Denies everything pending, closes the socket and removes the private directory. Idempotent. */
  close(): void;
}

export interface BrokerDeps {
  readonly clock: Clock;
  readonly random: (bytes: number) => Uint8Array;
  readonly boundMs: number;
  /** Parent of the private directory (default: the OS temp directory). */
  readonly baseDir?: string;
  /** Name prefix of the private directory (privateDirPrefix: the owning server, so a later one can sweep it). */
  readonly dirPrefix?: string;
}

/**
 * Creates the run's broker, listening before it returns. Throws ask_host_socket_path_too_long (nothing
 * created) or ask_host_listen_failed (its directory removed again).
 */
export function createPermissionBroker(deps: BrokerDeps): PermissionBroker {
  const hex = (n: number): string => Buffer.from(deps.random(n)).toString('hex');
  const baseDir = deps.baseDir ?? process.getBuiltinModule('node:os').tmpdir();
  const prefix = deps.dirPrefix ?? PRIVATE_DIR_PREFIX;
  assertSocketPathFits(join(baseDir, `${prefix}${'X'.repeat(MKDTEMP_SUFFIX_CHARS)}`, SOCKET_NAME));
  // mkdtemp creates the directory with mode 0700: only this user can reach the socket inside.
  const dir = mkdtempSync(join(baseDir, prefix));
  removeAtExit(dir, true);
  const socketPath = join(dir, SOCKET_NAME);
  const b: BrokerState = {
    book: createQuestionBook(deps.clock),
    clock: deps.clock,
    boundMs: deps.boundMs,
    hex,
    token: hex(32),
    sockets: new Set(),
    closed: false,
  };
  const { book } = b;
  // Built-ins loaded at first use keep them out of every start of the bundle (docs/AUDIT.md).
  const server: Server = process.getBuiltinModule('node:net').createServer((socket) => {
    onConnection(b, socket);
  });
  server.on('error', () => {});
  // Binding a pipe happens synchronously inside listen(), and `listening` says at once whether it worked
  // (the 'error' event only follows on the next tick): the socket accepts before the CLI can start.
  server.listen(socketPath);
  if (!server.listening) {
    server.close();
    rmSync(dir, { recursive: true, force: true });
    removeAtExit(dir, false);
    throw new ToolError('ask_host_listen_failed', 'the permission socket of this run could not listen; nothing was started');
  }

  return {
    socketPath,
    token: b.token,
    boundMs: deps.boundMs,
    pending: () => [...book.waiting.values()].map((w) => w.question),
    decided: () => ({ questions: [...book.decided], dropped: book.dropped }),
    onQuestion(listener) {
      book.questionListeners.push(listener);
    },
    onDecision(listener) {
      book.decisionListeners.push(listener);
    },
    answer: (questionId, answer) => answerQuestion(book, questionId, answer),
    close() {
      if (b.closed) return;
      b.closed = true;
      for (const questionId of [...book.waiting.keys()])
        decide(book, questionId, 'deny', 'claude-run-mcp: the run ended while asking; denied.', 'closed');
      for (const socket of b.sockets) socket.destroy();
      server.close();
      rmSync(dir, { recursive: true, force: true });
      removeAtExit(dir, false);
    },
  };
}

function assertSocketPathFits(socketPath: string): void {
  const bytes = Buffer.byteLength(socketPath, 'utf8');
  if (bytes <= MAX_UNIX_SOCKET_PATH_BYTES) return;
  throw new ToolError(
    'ask_host_socket_path_too_long',
    `the permission socket path would be ${bytes} bytes, over the ${MAX_UNIX_SOCKET_PATH_BYTES} bytes of a Unix socket path; start the server with a shorter TMPDIR; nothing was started`,
  );
}

/** The host's answer, from the adapter's own MCP connection (never from the socket). */
function answerQuestion(book: QuestionBook, questionId: string, answer: HostAnswer): DecidedQuestion {
  const reason = answer.reason === undefined ? '' : answer.reason.slice(0, MAX_DENY_REASON_CHARS);
  const message =
    answer.behavior === 'deny'
      ? reason === ''
        ? 'The person at the MCP client denied this tool use.'
        : `The person at the MCP client denied this tool use: ${reason}`
      : '';
  const entry = decide(book, questionId, answer.behavior, message, 'host');
  if (entry !== null) return entry;
  const why = noteLateAnswer(book, questionId, answer.behavior);
  throw new ToolError(
    'permission_question_not_pending',
    why === null
      ? 'the question is not pending (already answered, or unknown for this run)'
      : `the question was already decided without an answer (${why}): denied, and this answer was not used`,
    '/question_id',
  );
}

/** Why the question was decided without the person (null: unknown, or the person answered it already). */
function noteLateAnswer(book: QuestionBook, questionId: string, behavior: 'allow' | 'deny'): string | null {
  const index = book.decided.findIndex((d) => d.question_id === questionId);
  const found = book.decided[index];
  if (found === undefined || found.decided_by === 'host') return null;
  if (found.late_answer === undefined)
    book.decided[index] = { ...found, late_answer: { behavior, answered_at: iso(book.clock.wallNow()) } };
  return LATE_REASONS[found.decided_by];
}

/** Why a question was decided without the person, as a refused late answer explains it. */
const LATE_REASONS: Readonly<Record<Exclude<DecisionSource, 'host'>, string>> = {
  timeout: 'its time to answer ran out',
  closed: 'the run ended or its bridge went away',
  withdrawn: 'the nested Claude Code withdrew the call',
  overflow: 'too many questions were waiting or asked',
};

/** Private directories of brokers not closed yet: removed when the process exits by any path that runs code. */
const openDirs = new Set<string>();
let exitHookInstalled = false;

function removeAtExit(dir: string, open: boolean): void {
  if (!open) {
    openDirs.delete(dir);
    return;
  }
  openDirs.add(dir);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' listeners must be synchronous: rmSync is. A process killed outright leaves the directory to
  // the next server's sweep (private-dir.ts).
  process.on('exit', () => {
    for (const d of openDirs) rmSync(d, { recursive: true, force: true });
  });
}
