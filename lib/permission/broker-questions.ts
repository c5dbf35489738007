/**
 * The question book of one broker (broker.ts): the questions waiting for a decision, the decided ones kept
 * for the run's result, and the one way a question is decided (the native told on its stdin, the listeners
 * called).
 */
import { allowLine, denyLine, type CanUseToolRequest } from '../native/control.ts';
import type { SendLine } from '../runs/control-route.ts';
import type { Clock } from '../util/clock.ts';

export type { SendLine };

/** Questions of one run that may wait at once; more are denied at once. */
export const MAX_PENDING_QUESTIONS = 16;
/** Decided questions a run keeps for its result; the oldest are dropped first (counted). */
export const MAX_DECIDED_QUESTIONS = 64;
/**
 * Questions one run may put to its host in all: each is a form shown to the person, and a native (or a model
 * steering it) could otherwise ask without end. Later requests are denied at once, as overflow, and shown
 * to no one.
 */
export const MAX_QUESTIONS_PER_RUN = 256;

export type DecisionSource = 'host' | 'timeout' | 'closed' | 'overflow';

/** A question as the person (and claude.run.result) sees it. */
export type PermissionQuestion = {
  readonly question_id: string;
  readonly tool_name: string;
  readonly tool_use_id: string;
  /** The tool input as JSON text, cut at MAX_QUESTION_INPUT_CHARS. */
  readonly input: string;
  readonly input_bytes: number;
  readonly input_truncated: boolean;
  readonly asked_at: string;
  readonly expires_at: string;
};

export type DecidedQuestion = PermissionQuestion & {
  readonly behavior: 'allow' | 'deny';
  readonly decided_by: DecisionSource;
  readonly decided_at: string;
  /**
   * The first answer that came after the question was decided without the person (a form left open past
   * the bound, an answer to a run that ended): refused, never acted on, kept so the result can say so.
   */
  readonly late_answer?: { readonly behavior: 'allow' | 'deny'; readonly answered_at: string };
};

export interface Waiting {
  readonly question: PermissionQuestion;
  /** The native's own request: an allow echoes its input, and nothing else. */
  readonly request: CanUseToolRequest;
  readonly send: SendLine;
  /** Called once when the question is decided, however: ends its timer and its connection's hold on it. */
  readonly dispose: () => void;
}

export interface QuestionBook {
  readonly clock: Clock;
  readonly waiting: Map<string, Waiting>;
  readonly decided: DecidedQuestion[];
  dropped: number;
  /** Questions put to the host so far (never decreases; at most MAX_QUESTIONS_PER_RUN). */
  asked: number;
  readonly questionListeners: Array<(q: PermissionQuestion) => void>;
  readonly decisionListeners: Array<(d: DecidedQuestion) => void>;
}

export function createQuestionBook(clock: Clock): QuestionBook {
  return { clock, waiting: new Map(), decided: [], dropped: 0, asked: 0, questionListeners: [], decisionListeners: [] };
}

export const iso = (ms: number): string => new Date(ms).toISOString();

/** Tells the native; an input that has ended is not written (the native then denies the request itself). */
export function sendDecision(send: SendLine, request: CanUseToolRequest, behavior: 'allow' | 'deny', message: string): void {
  send(behavior === 'allow' ? allowLine(request) : denyLine(request.requestId, message));
}

/** Keeps a decided question (bounded, oldest dropped) and tells the decision listeners. */
export function record(book: QuestionBook, question: PermissionQuestion, behavior: 'allow' | 'deny', by: DecisionSource): DecidedQuestion {
  const entry: DecidedQuestion = { ...question, behavior, decided_by: by, decided_at: iso(book.clock.wallNow()) };
  book.decided.push(entry);
  if (book.decided.length > MAX_DECIDED_QUESTIONS) {
    book.decided.shift();
    book.dropped += 1;
  }
  for (const listener of book.decisionListeners) listener(entry);
  return entry;
}

/** Decides a waiting question (the native is told); null when it is not waiting. */
export function decide(
  book: QuestionBook,
  questionId: string,
  behavior: 'allow' | 'deny',
  message: string,
  by: DecisionSource,
): DecidedQuestion | null {
  const w = book.waiting.get(questionId);
  if (w === undefined) return null;
  book.waiting.delete(questionId);
  w.dispose();
  sendDecision(w.send, w.request, behavior, message);
  return record(book, w.question, behavior, by);
}
