// Every control line a native writes is answered or counted, never taken as an answer: can_use_tool goes to
// the run's permission port or is denied at once (no ask_host), unknown requests are refused up to a bound.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { denyLine, errorResponseLine, parseControlLine, type CanUseToolRequest, type ControlLine } from '../../lib/native/control.ts';
import {
  createControlTally,
  MAX_CONTROL_REFUSALS_PER_RUN,
  NO_ASK_HOST_DENY_MESSAGE,
  routeControlLine,
  type ControlRoute,
} from '../../lib/runs/control-route.ts';

const line = (value: Record<string, unknown>): ControlLine => {
  const parsed = parseControlLine(JSON.parse(JSON.stringify(value)));
  assert.ok(parsed);
  return parsed;
};
const canUse = (id: string): ControlLine =>
  line({
    type: 'control_request',
    request_id: id,
    request: { subtype: 'can_use_tool', tool_name: 'Bash', input: { command: 'ls' }, tool_use_id: 'toolu_1' },
  });

function route(asked: CanUseToolRequest[] | null, onResponse?: ControlRoute['onResponse']): ControlRoute & { written: string[] } {
  const written: string[] = [];
  return {
    port: asked === null ? null : { ask: (request) => void asked.push(request) },
    send: (l) => written.push(l) > 0,
    tally: createControlTally(),
    ...(onResponse ? { onResponse } : {}),
    written,
  };
}

describe('control lines of a run', () => {
  it('without ask_host a can_use_tool is denied at once, naming permission_mode', () => {
    const r = route(null);
    routeControlLine(canUse('req-1'), r);
    assert.deepEqual(r.written, [denyLine('req-1', NO_ASK_HOST_DENY_MESSAGE)]);
    assert.match(NO_ASK_HOST_DENY_MESSAGE, /permission_mode/);
    assert.equal(r.tally.denied_without_ask_host, 1);
  });

  it('with ask_host it goes to the port, and nothing is written here', () => {
    const asked: CanUseToolRequest[] = [];
    const r = route(asked);
    routeControlLine(canUse('req-1'), r);
    assert.deepEqual(
      asked.map((q) => q.requestId),
      ['req-1'],
    );
    assert.deepEqual(r.written, []);
  });

  it('a response that answers nothing of ours is counted, never passed on as an answer', () => {
    const asked: CanUseToolRequest[] = [];
    const ours: string[] = [];
    const r = route(asked, (response) => {
      if (response.requestId !== 'int-1') return false;
      ours.push(response.requestId);
      return true;
    });
    routeControlLine(line({ type: 'control_response', response: { subtype: 'success', request_id: 'req-9' } }), r);
    routeControlLine(line({ type: 'control_response', response: { subtype: 'success', request_id: 'int-1' } }), r);
    assert.deepEqual(ours, ['int-1']);
    assert.equal(r.tally.unmatched_responses, 1);
    assert.deepEqual([asked, r.written], [[], []]);
  });

  it('unknown requests are refused by id; unknown lines without an id only counted', () => {
    const r = route([]);
    routeControlLine(line({ type: 'control_request', request_id: 'r-1', request: { subtype: 'hook_callback' } }), r);
    routeControlLine(line({ type: 'control_request', request_id: 'r-2', request: { subtype: 'can_use_tool', tool_name: 'Bash' } }), r);
    routeControlLine(line({ type: 'control_cancel_request', request_id: 'r-3' }), r);
    routeControlLine(line({ type: 'control_request', request: { subtype: 'can_use_tool' } }), r);
    assert.deepEqual(r.written, [
      errorResponseLine('r-1', 'claude-run-mcp does not serve hook_callback requests; refused.'),
      errorResponseLine('r-2', 'claude-run-mcp does not serve a malformed can_use_tool request; refused.'),
    ]);
    assert.deepEqual([r.tally.unknown, r.tally.refused], [4, 2]);
  });

  it(`a flood: ${MAX_CONTROL_REFUSALS_PER_RUN} refusals are written, the rest only counted`, () => {
    const r = route([]);
    const flood = MAX_CONTROL_REFUSALS_PER_RUN + 10;
    for (let i = 0; i < flood; i += 1)
      routeControlLine(line({ type: 'control_request', request_id: `r-${i}`, request: { subtype: 'x' } }), r);
    assert.equal(r.written.length, MAX_CONTROL_REFUSALS_PER_RUN);
    assert.deepEqual([r.tally.unknown, r.tally.refused], [flood, MAX_CONTROL_REFUSALS_PER_RUN]);
  });
});
