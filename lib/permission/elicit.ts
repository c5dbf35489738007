/**
 * The legacy-era question: each permission question of a synchronous ask_host run becomes one
 * elicitation/create (form mode) to the client that started the run. The form's answer goes through the
 * broker like any other answer; a decline, a cancel, a malformed answer, a failed request or a closed
 * connection is a deny. When the question is decided otherwise (its bound, the run's end), the
 * elicitation is withdrawn (notifications/cancelled).
 */
import type { JsonObject } from '../util/json.ts';
import { isToolError } from '../tool-errors.ts';
import type { PermissionBroker, PermissionQuestion } from './broker.ts';
import { MAX_DENY_REASON_CHARS } from './preview.ts';

export type ElicitFn = (params: JsonObject, signal: AbortSignal) => Promise<JsonObject>;

/** The form: one required choice and an optional reason. Flat primitives only, as the spec requires. */
export const QUESTION_SCHEMA: JsonObject = {
  type: 'object',
  properties: {
    decision: { type: 'string', title: 'Allow this tool use?', enum: ['allow', 'deny'] },
    reason: { type: 'string', title: 'Reason (shown to the nested model when you deny)', maxLength: MAX_DENY_REASON_CHARS },
  },
  required: ['decision'],
};

/**
 * What the person reads. The time left is relative ("within 3 minutes"): a form is read on a screen whose
 * clock and zone the server does not know. `leftMs` is counted when the form is built (a task's form is
 * built at the poll that shows it); it is rounded down, so the form never promises more than there is.
 */
export function questionMessage(runId: string, q: PermissionQuestion, leftMs: number): string {
  const size = q.input_truncated ? ` (cut; the whole input is ${q.input_bytes} bytes)` : '';
  return (
    `Claude Code run ${runId} asks for permission to use ${q.tool_name} with this input${size}:\n${q.input}\n` +
    `Answer within ${timeLeftText(leftMs)}; no answer by then means deny, and an answer after that is refused.`
  );
}

/** "3 minutes", "1 minute 30 seconds", "45 seconds": whole units, rounded down, at least "1 second". */
export function timeLeftText(leftMs: number): string {
  const seconds = Math.max(1, Math.floor(leftMs / 1000));
  const plural = (n: number, unit: string): string => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds < 60) return plural(seconds, 'second');
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  return rest === 0 ? plural(minutes, 'minute') : `${plural(minutes, 'minute')} ${plural(rest, 'second')}`;
}

/** The decision a form answer carries, or null (a deny) for anything but an accepted, well-formed form. */
export function readAnswer(result: JsonObject): { behavior: 'allow' | 'deny'; reason?: string } | null {
  if (result['action'] !== 'accept') return null;
  const content = result['content'];
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return null;
  const decision = (content as JsonObject)['decision'];
  const reason = (content as JsonObject)['reason'];
  if (decision !== 'allow' && decision !== 'deny') return null;
  if (reason !== undefined && typeof reason !== 'string') return null;
  return decision === 'deny' && typeof reason === 'string' && reason !== '' ? { behavior: 'deny', reason } : { behavior: decision };
}

export function askThroughElicitation(broker: PermissionBroker, runId: string, elicit: ElicitFn): void {
  const open = new Map<string, AbortController>();
  broker.onDecision((decided) => {
    open.get(decided.question_id)?.abort();
    open.delete(decided.question_id);
  });
  broker.onQuestion((question) => {
    const controller = new AbortController();
    open.set(question.question_id, controller);
    const params: JsonObject = {
      mode: 'form',
      message: questionMessage(runId, question, broker.boundMs),
      requestedSchema: QUESTION_SCHEMA,
    };
    const answerWith = (answer: { behavior: 'allow' | 'deny'; reason?: string }): void => {
      if (controller.signal.aborted) return;
      try {
        broker.answer(question.question_id, answer);
      } catch (error) {
        // Decided meanwhile (bound, end of run): that decision stands.
        if (!isToolError(error)) throw error;
      }
    };
    elicit(params, controller.signal).then(
      (result) => {
        const answer = readAnswer(result);
        answerWith(
          answer ?? {
            behavior: 'deny',
            reason:
              result['action'] === 'accept' ? 'the answer was malformed' : `the person chose ${String(result['action']).slice(0, 32)}`,
          },
        );
      },
      () => answerWith({ behavior: 'deny', reason: 'the question could not be asked or was not answered' }),
    );
  });
}
