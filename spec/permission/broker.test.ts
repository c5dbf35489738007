// The in-band broker of one ask_host run: the native's can_use_tool requests become questions, and every
// decision goes back on the native's stdin as the control_response the pinned CLI reads. Allow echoes the
// native's own input; every other path (no answer, the run ending, a flood) is a deny, and every bound holds.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { allowLine, denyLine, parseControlLine, type CanUseToolRequest } from '../../lib/native/control.ts';
import {
  createPermissionBroker,
  MAX_DECIDED_QUESTIONS,
  MAX_PENDING_QUESTIONS,
  MAX_QUESTIONS_PER_RUN,
  type DecidedQuestion,
  type PermissionBroker,
  type PermissionQuestion,
} from '../../lib/permission/broker.ts';
import { MAX_DENY_REASON_CHARS, MAX_QUESTION_INPUT_CHARS } from '../../lib/permission/preview.ts';
import { isToolError, type ToolError } from '../../lib/tool-errors.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import { createManualClock } from '../helpers/manual-clock.ts';

const BOUND_MS = 60_000;

function request(n: number, input: JsonObject = { command: `touch m${n}`, description: 'a marker' }): CanUseToolRequest {
  const line = parseControlLine({
    type: 'control_request',
    request_id: `req-${n}`,
    request: { subtype: 'can_use_tool', tool_name: 'Bash', input, tool_use_id: `toolu_${n}` },
  });
  assert.equal(line?.kind, 'can_use_tool');
  return line as CanUseToolRequest;
}

interface Harness {
  readonly broker: PermissionBroker;
  readonly clock: ReturnType<typeof createManualClock>;
  /** Every line the broker wrote to the native's stdin. */
  readonly written: string[];
  readonly questions: PermissionQuestion[];
  readonly decisions: DecidedQuestion[];
  readonly send: (line: string) => boolean;
}

function harness(inputOpen = true): Harness {
  const clock = createManualClock(Date.parse('2026-12-03T20:00:00Z'));
  const broker = createPermissionBroker({ clock, random: (n) => randomBytes(n), boundMs: BOUND_MS });
  const written: string[] = [];
  const questions: PermissionQuestion[] = [];
  const decisions: DecidedQuestion[] = [];
  broker.onQuestion((q) => questions.push(q));
  broker.onDecision((d) => decisions.push(d));
  const send = (line: string): boolean => {
    written.push(line);
    return inputOpen;
  };
  return { broker, clock, written, questions, decisions, send };
}

const refusal = (fn: () => unknown): ToolError => {
  try {
    fn();
  } catch (error) {
    if (isToolError(error)) return error;
    throw error;
  }
  assert.fail('not refused');
};

const question = (h: Harness, i: number): PermissionQuestion => {
  const q = h.questions[i];
  assert.ok(q, `question ${i}`);
  return q;
};

describe('in-band permission broker', () => {
  it('a request becomes a question: tool, tool_use_id, the exact input as JSON text, asked and expiry times', () => {
    const h = harness();
    h.broker.ask(request(1), h.send);
    assert.equal(h.questions.length, 1);
    const q = question(h, 0);
    assert.match(q.question_id, /^pq_[0-9a-f]{24}$/);
    assert.deepEqual(
      [q.tool_name, q.tool_use_id, q.input, q.input_truncated],
      ['Bash', 'toolu_1', '{"command":"touch m1","description":"a marker"}', false],
    );
    assert.equal(Date.parse(q.expires_at) - Date.parse(q.asked_at), BOUND_MS);
    assert.deepEqual(h.broker.pending(), [q]);
    assert.deepEqual(h.written, [], 'nothing is written to the native before a decision');
  });

  it('allow: the native gets its own input back as updatedInput, nothing else; the answer is recorded as host', () => {
    const h = harness();
    const r = request(1);
    h.broker.ask(r, h.send);
    const decided = h.broker.answer(question(h, 0).question_id, { behavior: 'allow', reason: '{"command":"rm -rf /"}' });
    assert.deepEqual(h.written, [allowLine(r)]);
    assert.deepEqual(JSON.parse(h.written[0] ?? '').response.response, {
      behavior: 'allow',
      updatedInput: { command: 'touch m1', description: 'a marker' },
    });
    assert.deepEqual([decided.behavior, decided.decided_by], ['allow', 'host']);
    assert.deepEqual(h.broker.pending(), []);
  });

  it(`deny: the reason reaches the model, cut at ${MAX_DENY_REASON_CHARS} characters; without one a plain message`, () => {
    const h = harness();
    h.broker.ask(request(1), h.send);
    h.broker.ask(request(2), h.send);
    h.broker.answer(question(h, 0).question_id, { behavior: 'deny', reason: 'r'.repeat(MAX_DENY_REASON_CHARS + 50) });
    h.broker.answer(question(h, 1).question_id, { behavior: 'deny' });
    assert.deepEqual(h.written, [
      denyLine('req-1', `The person at the MCP client denied this tool use: ${'r'.repeat(MAX_DENY_REASON_CHARS)}`),
      denyLine('req-2', 'The person at the MCP client denied this tool use.'),
    ]);
  });

  it('no answer within the bound: denied by timeout, not a moment before; a late answer is refused and noted', () => {
    const h = harness();
    h.broker.ask(request(1), h.send);
    const id = question(h, 0).question_id;
    h.clock.advance(BOUND_MS - 1);
    assert.deepEqual(h.written, []);
    h.clock.advance(1);
    assert.deepEqual(h.written, [denyLine('req-1', `claude-run-mcp: no answer from the host within ${BOUND_MS / 1000} s; denied.`)]);
    assert.equal(h.decisions[0]?.decided_by, 'timeout');
    const late = refusal(() => h.broker.answer(id, { behavior: 'allow' }));
    assert.equal(late.code, 'permission_question_not_pending');
    assert.match(late.message, /its time to answer ran out/);
    assert.equal(h.written.length, 1, 'the late allow wrote nothing');
    assert.equal(h.broker.decided().questions[0]?.late_answer?.behavior, 'allow');
  });

  it('an answer to an unknown or decided question is refused and writes nothing', () => {
    const h = harness();
    h.broker.ask(request(1), h.send);
    const id = question(h, 0).question_id;
    h.broker.answer(id, { behavior: 'deny' });
    assert.equal(refusal(() => h.broker.answer(id, { behavior: 'allow' })).code, 'permission_question_not_pending');
    assert.equal(refusal(() => h.broker.answer('pq_nope', { behavior: 'allow' })).code, 'permission_question_not_pending');
    assert.equal(h.written.length, 1);
  });

  it('close (cancel, end of run, server exit) denies everything pending; later requests are denied at once', () => {
    const h = harness();
    h.broker.ask(request(1), h.send);
    h.broker.ask(request(2), h.send);
    h.broker.close();
    h.broker.close();
    assert.deepEqual(h.written, [
      denyLine('req-1', 'claude-run-mcp: the run ended while asking; denied.'),
      denyLine('req-2', 'claude-run-mcp: the run ended while asking; denied.'),
    ]);
    h.broker.ask(request(3), h.send);
    assert.equal(h.written[2], denyLine('req-3', 'claude-run-mcp: the run is ending; denied.'));
    assert.deepEqual(
      h.decisions.map((d) => d.decided_by),
      ['closed', 'closed', 'closed'],
    );
    assert.equal(h.questions.length, 2, 'a request after close is shown to no one');
    assert.equal(h.clock.pending(), 0, 'no timer left');
  });

  it('an input that has ended: the decision is recorded all the same (the native denies on EOF itself)', () => {
    const h = harness(false);
    h.broker.ask(request(1), h.send);
    const decided = h.broker.answer(question(h, 0).question_id, { behavior: 'allow' });
    assert.equal(decided.behavior, 'allow');
    assert.equal(h.written.length, 1);
  });

  it(`${MAX_PENDING_QUESTIONS} questions may wait at once; one more is denied at once as overflow and shown to no one`, () => {
    const h = harness();
    for (let i = 0; i < MAX_PENDING_QUESTIONS; i += 1) h.broker.ask(request(i), h.send);
    assert.equal(h.broker.pending().length, MAX_PENDING_QUESTIONS);
    assert.deepEqual(h.written, []);
    h.broker.ask(request(99), h.send);
    assert.deepEqual(h.written, [denyLine('req-99', `claude-run-mcp: more than ${MAX_PENDING_QUESTIONS} questions waiting; denied.`)]);
    assert.equal(h.questions.length, MAX_PENDING_QUESTIONS);
    assert.equal(h.decisions.at(-1)?.decided_by, 'overflow');
    h.broker.answer(question(h, 0).question_id, { behavior: 'deny' });
    h.broker.ask(request(100), h.send);
    assert.equal(h.broker.pending().length, MAX_PENDING_QUESTIONS, 'a freed place is taken again');
    h.broker.close();
  });

  it(`${MAX_QUESTIONS_PER_RUN} questions in all per run; the next is overflow however many are waiting`, () => {
    const h = harness();
    for (let i = 0; i < MAX_QUESTIONS_PER_RUN; i += 1) {
      h.broker.ask(request(i), h.send);
      h.broker.answer(question(h, i).question_id, { behavior: 'deny' });
    }
    assert.equal(h.questions.length, MAX_QUESTIONS_PER_RUN);
    h.broker.ask(request(MAX_QUESTIONS_PER_RUN), h.send);
    assert.equal(h.questions.length, MAX_QUESTIONS_PER_RUN);
    assert.equal(
      h.written.at(-1),
      denyLine(`req-${MAX_QUESTIONS_PER_RUN}`, `claude-run-mcp: more than ${MAX_QUESTIONS_PER_RUN} questions asked in this run; denied.`),
    );
    const { questions, dropped } = h.broker.decided();
    assert.equal(questions.length, MAX_DECIDED_QUESTIONS, `the result keeps the newest ${MAX_DECIDED_QUESTIONS}`);
    assert.equal(dropped, MAX_QUESTIONS_PER_RUN + 1 - MAX_DECIDED_QUESTIONS, 'and counts the dropped ones');
  });

  it(`an input over ${MAX_QUESTION_INPUT_CHARS} characters is shown cut, with its full size; the allow still echoes it whole`, () => {
    const h = harness();
    const big = { content: 'x'.repeat(MAX_QUESTION_INPUT_CHARS) };
    const r = request(1, big);
    h.broker.ask(r, h.send);
    const q = question(h, 0);
    assert.equal(q.input_truncated, true);
    assert.equal(q.input_bytes, Buffer.byteLength(JSON.stringify(big)));
    assert.equal(q.input.length, MAX_QUESTION_INPUT_CHARS + 1);
    h.broker.answer(q.question_id, { behavior: 'allow' });
    assert.equal(h.written[0], allowLine(r));
  });
});
