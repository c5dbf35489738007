/**
 * The broker of one run that asks its host: a Unix socket in a fresh private (0700) directory that only
 * the run's bridge is told about, the run's pending questions, and their answers. Questions come only
 * from the socket; answers come only from the adapter's own MCP connection (answer()), never from the
 * socket, so a nested model cannot answer its own question. Every question is decided within the bound:
 * no answer, a closed broker (cancel, end of run, adapter exit) or a withdrawn call is a denial.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server, Socket } from 'node:net';
import { join } from 'node:path';
import type { Clock } from '../util/clock.ts';
import { createLineSplitter } from '../util/line-splitter.ts';
import type { JsonObject } from '../util/json.ts';
import { ToolError } from '../tool-errors.ts';
import { PRIVATE_DIR_PREFIX } from './private-dir.ts';
import { inputPreview, MAX_BRIDGE_LINE_BYTES, MAX_DENY_REASON_CHARS, parseBridgeMessage, type DecisionMessage } from './wire.ts';

/** Questions of one run that may wait at once; more are denied at once. */
export const MAX_PENDING_QUESTIONS = 16;
/** Decided questions a run keeps for its result; the oldest are dropped first (counted). */
export const MAX_DECIDED_QUESTIONS = 64;
/** Bridge connections of one run alive at once (the CLI respawns a dead bridge; one is normal). */
export const MAX_BRIDGE_CONNECTIONS = 2;
/**
 * A connection that has not authenticated within this is closed: the bridge sends its token as soon as it
 * connects, and an idle connection must not hold one of the MAX_BRIDGE_CONNECTIONS slots for good.
 */
export const BRIDGE_AUTH_TIMEOUT_MS = 3_000;

export type DecisionSource = 'host' | 'timeout' | 'closed' | 'withdrawn' | 'overflow';

/** A question as the person (and claude.run.result) sees it. */
export interface PermissionQuestion {
  readonly question_id: string;
  readonly tool_name: string;
  readonly tool_use_id: string;
  /** The tool input as JSON text, cut at MAX_QUESTION_INPUT_CHARS. */
  readonly input: string;
  readonly input_bytes: number;
  readonly input_truncated: boolean;
  readonly asked_at: string;
  readonly expires_at: string;
}

export interface DecidedQuestion extends PermissionQuestion {
  readonly behavior: 'allow' | 'deny';
  readonly decided_by: DecisionSource;
  readonly decided_at: string;
  /**
   * The first answer that came after the question was decided without the person (a form left open past
   * the bound, an answer to a run that ended): refused, never acted on, kept so the result can say so.
   */
  readonly late_answer?: { readonly behavior: 'allow' | 'deny'; readonly answered_at: string };
}

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

interface Waiting {
  readonly question: PermissionQuestion;
  readonly socket: Socket;
  readonly bridgeId: string;
  readonly dispose: () => void;
}

export function createPermissionBroker(deps: BrokerDeps): PermissionBroker {
  const hex = (n: number): string => Buffer.from(deps.random(n)).toString('hex');
  // mkdtemp creates the directory with mode 0700: only this user can reach the socket inside.
  const dir = mkdtempSync(join(deps.baseDir ?? process.getBuiltinModule('node:os').tmpdir(), deps.dirPrefix ?? PRIVATE_DIR_PREFIX));
  removeAtExit(dir, true);
  const socketPath = join(dir, 'bridge.sock');
  const token = hex(32);
  const waiting = new Map<string, Waiting>();
  const decided: DecidedQuestion[] = [];
  let dropped = 0;
  let closed = false;
  const listeners: Array<(q: PermissionQuestion) => void> = [];
  const decisionListeners: Array<(d: DecidedQuestion) => void> = [];
  const sockets = new Set<Socket>();

  const iso = (ms: number): string => new Date(ms).toISOString();
  const send = (socket: Socket, message: DecisionMessage): void => { if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`); };
  const record = (question: PermissionQuestion, behavior: 'allow' | 'deny', by: DecisionSource): DecidedQuestion => {
    const entry: DecidedQuestion = { ...question, behavior, decided_by: by, decided_at: iso(deps.clock.wallNow()) };
    decided.push(entry);
    if (decided.length > MAX_DECIDED_QUESTIONS) { decided.shift(); dropped += 1; }
    for (const listener of decisionListeners) listener(entry);
    return entry;
  };
  const decide = (questionId: string, behavior: 'allow' | 'deny', message: string, by: DecisionSource): DecidedQuestion | null => {
    const w = waiting.get(questionId);
    if (w === undefined) return null;
    waiting.delete(questionId);
    w.dispose();
    if (by !== 'withdrawn') send(w.socket, { t: 'decision', id: w.bridgeId, behavior, message });
    return record(w.question, behavior, by);
  };

  /** Why the question was decided without the person (null: unknown, or the person answered it already). */
  const noteLateAnswer = (questionId: string, behavior: 'allow' | 'deny'): string | null => {
    const index = decided.findIndex((d) => d.question_id === questionId);
    const found = decided[index];
    if (found === undefined || found.decided_by === 'host') return null;
    if (found.late_answer === undefined) decided[index] = { ...found, late_answer: { behavior, answered_at: iso(deps.clock.wallNow()) } };
    return LATE_REASONS[found.decided_by];
  };

  const onConnection = (socket: Socket): void => {
    if (closed || sockets.size >= MAX_BRIDGE_CONNECTIONS) { socket.destroy(); return; }
    sockets.add(socket);
    let authenticated = false;
    // Decided after the loop's next poll: a token that arrived while this process was not scheduled is read
    // before the timer can close its connection.
    const disposeAuthTimer = deps.clock.setTimeout(() => setImmediate(() => { if (!authenticated) socket.destroy(); }), BRIDGE_AUTH_TIMEOUT_MS);
    const mine = new Map<string, string>(); // bridge id → question id
    const lines = createLineSplitter({
      maxLineBytes: MAX_BRIDGE_LINE_BYTES,
      onLine: (frame) => {
        const message = parseBridgeMessage(frame.toString('utf8'));
        if (message === null || (!authenticated && message.t !== 'hello')) { socket.destroy(); return; }
        switch (message.t) {
          case 'hello':
            if (authenticated || !sameToken(message.token, token)) { socket.destroy(); return; }
            authenticated = true;
            disposeAuthTimer();
            return;
          case 'ask': {
            if (mine.has(message.id)) { socket.destroy(); return; }
            const now = deps.clock.wallNow();
            const preview = inputPreview(message.input as JsonObject);
            const question: PermissionQuestion = {
              question_id: `pq_${hex(12)}`,
              tool_name: message.tool_name.slice(0, 256),
              tool_use_id: message.tool_use_id.slice(0, 256),
              input: preview.text,
              input_bytes: preview.bytes,
              input_truncated: preview.truncated,
              asked_at: iso(now),
              expires_at: iso(now + deps.boundMs),
            };
            if (waiting.size >= MAX_PENDING_QUESTIONS) {
              send(socket, { t: 'decision', id: message.id, behavior: 'deny', message: `claude-run-mcp: more than ${MAX_PENDING_QUESTIONS} questions waiting; denied.` });
              record(question, 'deny', 'overflow');
              return;
            }
            mine.set(message.id, question.question_id);
            const dispose = deps.clock.setTimeout(() => {
              decide(question.question_id, 'deny', `claude-run-mcp: no answer from the host within ${Math.round(deps.boundMs / 1000)} s; denied.`, 'timeout');
            }, deps.boundMs);
            waiting.set(question.question_id, { question, socket, bridgeId: message.id, dispose });
            for (const listener of listeners) listener(question);
            return;
          }
          case 'withdraw': {
            const questionId = mine.get(message.id);
            if (questionId !== undefined) decide(questionId, 'deny', '', 'withdrawn');
            return;
          }
        }
      },
      onOversize: () => { socket.destroy(); },
    });
    socket.on('data', (chunk: Buffer) => lines.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      disposeAuthTimer();
      sockets.delete(socket);
      // The bridge is gone: its questions can no longer be answered; it has denied them itself.
      for (const questionId of mine.values()) decide(questionId, 'deny', '', 'closed');
    });
  };

  // Built-ins loaded at first use keep them out of every start of the bundle (docs/AUDIT.md).
  const server: Server = process.getBuiltinModule('node:net').createServer(onConnection);
  server.on('error', () => {});
  // Binding a pipe happens synchronously inside listen(): the socket accepts before the CLI can start.
  server.listen(socketPath);

  return {
    socketPath,
    token,
    boundMs: deps.boundMs,
    pending: () => [...waiting.values()].map((w) => w.question),
    decided: () => ({ questions: [...decided], dropped }),
    onQuestion(listener) { listeners.push(listener); },
    onDecision(listener) { decisionListeners.push(listener); },
    answer(questionId, answer) {
      const reason = answer.reason === undefined ? '' : answer.reason.slice(0, MAX_DENY_REASON_CHARS);
      const message = answer.behavior === 'deny' ? (reason === '' ? 'The person at the MCP client denied this tool use.' : `The person at the MCP client denied this tool use: ${reason}`) : '';
      const entry = decide(questionId, answer.behavior, message, 'host');
      if (entry !== null) return entry;
      const why = noteLateAnswer(questionId, answer.behavior);
      throw new ToolError('permission_question_not_pending', why === null
        ? 'the question is not pending (already answered, or unknown for this run)'
        : `the question was already decided without an answer (${why}): denied, and this answer was not used`, '/question_id');
    },
    close() {
      if (closed) return;
      closed = true;
      for (const questionId of [...waiting.keys()]) decide(questionId, 'deny', 'claude-run-mcp: the run ended while asking; denied.', 'closed');
      for (const socket of sockets) socket.destroy();
      server.close();
      rmSync(dir, { recursive: true, force: true });
      removeAtExit(dir, false);
    },
  };
}

/** Why a question was decided without the person, as a refused late answer explains it. */
const LATE_REASONS: Readonly<Record<Exclude<DecisionSource, 'host'>, string>> = {
  timeout: 'its time to answer ran out',
  closed: 'the run ended or its bridge went away',
  withdrawn: 'the nested Claude Code withdrew the call',
  overflow: 'too many questions were waiting',
};

/** Private directories of brokers not closed yet: removed when the process exits by any path that runs code. */
const openDirs = new Set<string>();
let exitHookInstalled = false;

function removeAtExit(dir: string, open: boolean): void {
  if (!open) { openDirs.delete(dir); return; }
  openDirs.add(dir);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' listeners must be synchronous: rmSync is. A process killed outright leaves the directory to
  // the next server's sweep (private-dir.ts).
  process.on('exit', () => { for (const d of openDirs) rmSync(d, { recursive: true, force: true }); });
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && process.getBuiltinModule('node:crypto').timingSafeEqual(a, b);
}
