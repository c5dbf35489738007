/**
 * The broker of one run that asks its host, in-band: the native's can_use_tool control requests (on its own
 * stdout) become the run's questions, and each decision goes back to it as a control_response on its stdin.
 * Questions come only from the native's stdout; answers come only from the adapter's own MCP connection
 * (answer()), so a nested model cannot answer its own question. An allow returns the native's own input
 * unchanged: nothing from the client's answer becomes updatedInput or updatedPermissions. Every question is
 * decided within the bound: no answer, or a closed broker (cancel, end of run, adapter exit), is a denial.
 */
import type { CanUseToolRequest } from '../native/control.ts';
import type { Clock } from '../util/clock.ts';
import { ToolError } from '../tool-errors.ts';
import {
  createQuestionBook,
  decide,
  iso,
  MAX_PENDING_QUESTIONS,
  MAX_QUESTIONS_PER_RUN,
  record,
  sendDecision,
  type DecidedQuestion,
  type DecisionSource,
  type PermissionQuestion,
  type QuestionBook,
  type SendLine,
} from './broker-questions.ts';
import { inputPreview, MAX_DENY_REASON_CHARS } from './preview.ts';

export { MAX_DECIDED_QUESTIONS, MAX_PENDING_QUESTIONS, MAX_QUESTIONS_PER_RUN } from './broker-questions.ts';
export type { DecidedQuestion, DecisionSource, PermissionQuestion, SendLine } from './broker-questions.ts';

export interface HostAnswer {
  readonly behavior: 'allow' | 'deny';
  readonly reason?: string | undefined;
}

export interface PermissionBroker {
  readonly boundMs: number;
  /**
   * A can_use_tool request of the run's native: it becomes a pending question, or is denied at once (too many
   * waiting or asked, the broker closed). `send` writes to that native's stdin.
   */
  ask(request: CanUseToolRequest, send: SendLine): void;
  pending(): readonly PermissionQuestion[];
  decided(): { readonly questions: readonly DecidedQuestion[]; readonly dropped: number };
  /** Called once per new question (for elicitation or input_required); the answer still goes through answer(). */
  onQuestion(listener: (question: PermissionQuestion) => void): void;
  /** Called once per decided question, whoever decided it (to withdraw a question shown elsewhere). */
  onDecision(listener: (decided: DecidedQuestion) => void): void;
  /**
   * Answers a pending question; permission_question_not_pending when it is decided or unknown. An answer to
   * a question decided without the person is recorded as its late_answer before the refusal.
   */
  answer(questionId: string, answer: HostAnswer): DecidedQuestion;
  /** Denies everything pending; later requests are denied at once. Idempotent. */
  close(): void;
}

export interface BrokerDeps {
  readonly clock: Clock;
  readonly random: (bytes: number) => Uint8Array;
  readonly boundMs: number;
}

export function createPermissionBroker(deps: BrokerDeps): PermissionBroker {
  const book = createQuestionBook(deps.clock);
  const hex = (n: number): string => Buffer.from(deps.random(n)).toString('hex');
  let closed = false;
  return {
    boundMs: deps.boundMs,
    ask(request, send) {
      const question = questionOf(book, hex, deps.boundMs, request);
      const refusal = closed
        ? 'the run is ending'
        : book.waiting.size >= MAX_PENDING_QUESTIONS
          ? `more than ${MAX_PENDING_QUESTIONS} questions waiting`
          : book.asked >= MAX_QUESTIONS_PER_RUN
            ? `more than ${MAX_QUESTIONS_PER_RUN} questions asked in this run`
            : null;
      if (refusal !== null) {
        sendDecision(send, request, 'deny', `claude-run-mcp: ${refusal}; denied.`);
        record(book, question, 'deny', closed ? 'closed' : 'overflow');
        return;
      }
      book.asked += 1;
      const dispose = deps.clock.setTimeout(() => {
        decide(
          book,
          question.question_id,
          'deny',
          `claude-run-mcp: no answer from the host within ${Math.round(deps.boundMs / 1000)} s; denied.`,
          'timeout',
        );
      }, deps.boundMs);
      book.waiting.set(question.question_id, { question, request, send, dispose });
      for (const listener of book.questionListeners) listener(question);
    },
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
      if (closed) return;
      closed = true;
      for (const questionId of [...book.waiting.keys()])
        decide(book, questionId, 'deny', 'claude-run-mcp: the run ended while asking; denied.', 'closed');
    },
  };
}

function questionOf(book: QuestionBook, hex: (n: number) => string, boundMs: number, request: CanUseToolRequest): PermissionQuestion {
  const now = book.clock.wallNow();
  const preview = inputPreview(request.input);
  return {
    question_id: `pq_${hex(12)}`,
    tool_name: request.toolName,
    tool_use_id: request.toolUseId,
    input: preview.text,
    input_bytes: preview.bytes,
    input_truncated: preview.truncated,
    asked_at: iso(now),
    expires_at: iso(now + boundMs),
  };
}

/** The host's answer, from the adapter's own MCP connection (never from the native). */
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
  closed: 'the run ended',
  overflow: 'too many questions were waiting or asked',
};
