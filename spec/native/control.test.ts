import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_CONTROL_DENY_MESSAGE_CHARS,
  MAX_CONTROL_ERROR_CHARS,
  MAX_CONTROL_INPUT_BYTES,
  MAX_CONTROL_NAME_CHARS,
  MAX_CONTROL_REQUEST_ID_CHARS,
  MAX_CONTROL_TOOL_NAME_CHARS,
  MAX_CONTROL_TOOL_USE_ID_CHARS,
  allowLine,
  denyLine,
  errorResponseLine,
  interruptLine,
  isControlLine,
  parseControlLine,
  userMessageLine,
} from '../../lib/native/control.ts';
import type { CanUseToolRequest, ControlLine, UnknownControl } from '../../lib/native/control.ts';
import { parseNativeEvent } from '../../lib/native/events.ts';
import type { JsonObject } from '../../lib/util/json.ts';

/** A can_use_tool line as the pinned 2.1.332 wrote it (../shared/native/CONTROL-PROTOCOL.md), paths shortened. */
const REAL_REQUEST =
  '{"type":"control_request","request_id":"4345ffda-5a4c-4d59-9a7e-0d0f8c2f6e11","request":{"subtype":"can_use_tool","tool_name":"Bash",' +
  '"display_name":"Bash","input":{"command":"echo hello-from-bash > fake-tool-marker.txt; echo hello-from-bash",' +
  '"description":"Run a command for the fake test"},"description":"Run a command for the fake test",' +
  '"permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"echo hello-from-bash *"}],' +
  '"behavior":"allow","destination":"localSettings"},{"type":"addDirectories","directories":["/cwd"],"destination":"session"}],' +
  '"blocked_path":"/cwd/fake-tool-marker.txt","tool_use_id":"toolu_fake_2"}}';
const REAL_INTERRUPT_ACK =
  '{"type":"control_response","response":{"subtype":"success","request_id":"int-1","response":{"still_queued":[]}}}';

function parsed(line: string): JsonObject {
  const event = parseNativeEvent(line);
  assert.ok(event.ok, line);
  return event.event;
}
const control = (line: string): ControlLine | null => parseControlLine(parsed(line));
const request = (fields: Record<string, unknown>, id: unknown = 'r-1'): ControlLine | null =>
  control(
    JSON.stringify({
      type: 'control_request',
      request_id: id,
      request: { subtype: 'can_use_tool', tool_name: 'Bash', input: { command: 'ls' }, tool_use_id: 'toolu_1', ...fields },
    }),
  );
function canUse(line: ControlLine | null): CanUseToolRequest {
  assert.equal(line?.kind, 'can_use_tool', JSON.stringify(line));
  return line as CanUseToolRequest;
}
function unknownOf(line: ControlLine | null): UnknownControl {
  assert.equal(line?.kind, 'unknown', JSON.stringify(line));
  return line as UnknownControl;
}

describe('native control lines: recognised', () => {
  it('the real can_use_tool request: id, tool, the exact input, tool_use_id; suggestions are not kept', () => {
    const q = canUse(control(REAL_REQUEST));
    assert.deepEqual(q, {
      kind: 'can_use_tool',
      requestId: '4345ffda-5a4c-4d59-9a7e-0d0f8c2f6e11',
      toolName: 'Bash',
      input: {
        command: 'echo hello-from-bash > fake-tool-marker.txt; echo hello-from-bash',
        description: 'Run a command for the fake test',
      },
      inputBytes: Buffer.byteLength(JSON.stringify(q.input)),
      toolUseId: 'toolu_fake_2',
    });
  });

  it('the real interrupt acknowledgement and an error response', () => {
    assert.deepEqual(control(REAL_INTERRUPT_ACK), { kind: 'response', outcome: 'success', requestId: 'int-1' });
    const error = '{"type":"control_response","response":{"subtype":"error","request_id":"int-2","error":"no turn"}}';
    assert.deepEqual(control(error), { kind: 'response', outcome: 'error', requestId: 'int-2', error: 'no turn' });
  });

  it('ordinary stream events are not control lines', () => {
    for (const line of ['{"type":"result","subtype":"success"}', '{"type":"system","subtype":"init"}', '{"type":"controlx"}', '{}']) {
      assert.equal(isControlLine(parsed(line)), false, line);
      assert.equal(control(line), null, line);
    }
  });
});

describe('native control lines: anything else is unknown, never an answer or a question', () => {
  it('an unknown control type (a cancel, say) is unknown_type, with nothing to refuse', () => {
    const u = unknownOf(control('{"type":"control_cancel_request","request_id":"r-9"}'));
    assert.deepEqual(u, {
      kind: 'unknown',
      reason: 'unknown_type',
      type: 'control_cancel_request',
      subtype: null,
      refusableId: null,
      path: null,
    });
  });

  it('a request of another subtype is unknown_subtype and refusable by its id', () => {
    const u = unknownOf(control('{"type":"control_request","request_id":"r-2","request":{"subtype":"hook_callback"}}'));
    assert.deepEqual([u.reason, u.subtype, u.refusableId], ['unknown_subtype', 'hook_callback', 'r-2']);
    const interrupt = unknownOf(control('{"type":"control_request","request_id":"r-3","request":{"subtype":"interrupt"}}'));
    assert.equal(interrupt.reason, 'unknown_subtype', 'the native cannot interrupt this package');
  });

  it('a can_use_tool with a broken field is malformed, names the field, and stays refusable', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tool_name: 7 }, '/request/tool_name'],
      [{ tool_name: '' }, '/request/tool_name'],
      [{ tool_name: 'Ba sh' }, '/request/tool_name'],
      [{ tool_use_id: undefined }, '/request/tool_use_id'],
      [{ input: 'ls' }, '/request/input'],
      [{ input: null }, '/request/input'],
      [{ input: ['ls'] }, '/request/input'],
    ];
    for (const [fields, path] of cases) {
      const u = unknownOf(request(fields));
      assert.deepEqual([u.reason, u.path, u.refusableId], ['malformed', path, 'r-1'], JSON.stringify(fields));
    }
    const noRequest = unknownOf(control('{"type":"control_request","request_id":"r-4","request":"can_use_tool"}'));
    assert.deepEqual([noRequest.reason, noRequest.path, noRequest.refusableId], ['malformed', '/request', 'r-4']);
  });

  it('a request id that is missing, empty, not a string or not printable leaves nothing to answer', () => {
    for (const id of [null, '', 5, 'a b', 'tab\there', 'é']) {
      const u = unknownOf(request({}, id));
      assert.deepEqual([u.reason, u.path, u.refusableId], ['malformed', '/request_id', null], String(id));
    }
    const missing = unknownOf(control('{"type":"control_request","request":{"subtype":"can_use_tool"}}'));
    assert.deepEqual([missing.reason, missing.path, missing.refusableId], ['malformed', '/request_id', null]);
  });

  it('responses without a well-formed id, with another subtype or a bad error text are unknown', () => {
    const lines: Array<[string, string, string | null]> = [
      ['{"type":"control_response"}', 'malformed', '/response'],
      ['{"type":"control_response","response":{"subtype":"success"}}', 'malformed', '/response/request_id'],
      ['{"type":"control_response","response":{"subtype":"success","request_id":""}}', 'malformed', '/response/request_id'],
      ['{"type":"control_response","response":{"subtype":"maybe","request_id":"int-1"}}', 'unknown_subtype', null],
      ['{"type":"control_response","response":{"subtype":"error","request_id":"int-1"}}', 'malformed', '/response/error'],
      ['{"type":"control_response","request_id":"int-1","subtype":"success"}', 'malformed', '/response'],
    ];
    for (const [line, reason, path] of lines) {
      const u = unknownOf(control(line));
      assert.deepEqual([u.reason, u.path, u.refusableId], [reason, path, null], line);
    }
  });
});

describe('native control lines: bounds', () => {
  it(`request id: ${MAX_CONTROL_REQUEST_ID_CHARS} characters taken, one more refused with nothing to answer`, () => {
    assert.equal(canUse(request({}, 'i'.repeat(MAX_CONTROL_REQUEST_ID_CHARS))).requestId.length, MAX_CONTROL_REQUEST_ID_CHARS);
    assert.equal(unknownOf(request({}, 'i'.repeat(MAX_CONTROL_REQUEST_ID_CHARS + 1))).refusableId, null);
    const longAck = {
      type: 'control_response',
      response: { subtype: 'success', request_id: 'i'.repeat(MAX_CONTROL_REQUEST_ID_CHARS + 1) },
    };
    assert.equal(unknownOf(control(JSON.stringify(longAck))).path, '/response/request_id');
  });

  it(`tool name ${MAX_CONTROL_TOOL_NAME_CHARS} and tool_use_id ${MAX_CONTROL_TOOL_USE_ID_CHARS} characters taken, one more malformed`, () => {
    assert.equal(canUse(request({ tool_name: 'T'.repeat(MAX_CONTROL_TOOL_NAME_CHARS) })).toolName.length, MAX_CONTROL_TOOL_NAME_CHARS);
    assert.equal(unknownOf(request({ tool_name: 'T'.repeat(MAX_CONTROL_TOOL_NAME_CHARS + 1) })).path, '/request/tool_name');
    assert.equal(
      canUse(request({ tool_use_id: 'u'.repeat(MAX_CONTROL_TOOL_USE_ID_CHARS) })).toolUseId.length,
      MAX_CONTROL_TOOL_USE_ID_CHARS,
    );
    assert.equal(unknownOf(request({ tool_use_id: 'u'.repeat(MAX_CONTROL_TOOL_USE_ID_CHARS + 1) })).path, '/request/tool_use_id');
  });

  it(`input: ${MAX_CONTROL_INPUT_BYTES} bytes of JSON taken (multi-byte text counted in bytes), one more malformed`, () => {
    const wrapper = Buffer.byteLength(JSON.stringify({ s: '' }));
    const atBound = { s: 'x'.repeat(MAX_CONTROL_INPUT_BYTES - wrapper) };
    const q = canUse(request({ input: atBound }));
    assert.equal(q.inputBytes, MAX_CONTROL_INPUT_BYTES);
    assert.equal(unknownOf(request({ input: { s: `${atBound.s}x` } })).path, '/request/input');
    // 'é' is one character and two bytes: the bound is on bytes.
    const multi = { s: 'é'.repeat((MAX_CONTROL_INPUT_BYTES - wrapper) / 2) };
    assert.equal(canUse(request({ input: multi })).inputBytes, MAX_CONTROL_INPUT_BYTES);
    assert.equal(unknownOf(request({ input: { s: `${multi.s}x` } })).path, '/request/input');
  });

  it(`error text: ${MAX_CONTROL_ERROR_CHARS} characters taken, one more malformed`, () => {
    const response = (error: string): ControlLine | null =>
      control(JSON.stringify({ type: 'control_response', response: { subtype: 'error', request_id: 'int-1', error } }));
    assert.equal(response('e'.repeat(MAX_CONTROL_ERROR_CHARS))?.kind, 'response');
    assert.equal(unknownOf(response('e'.repeat(MAX_CONTROL_ERROR_CHARS + 1))).path, '/response/error');
  });

  it(`an unknown type or subtype is reported up to ${MAX_CONTROL_NAME_CHARS} plain characters, else as null`, () => {
    const named = (type: string): ControlLine | null => control(JSON.stringify({ type }));
    const atBound = `control_${'x'.repeat(MAX_CONTROL_NAME_CHARS - 'control_'.length)}`;
    assert.equal(unknownOf(named(atBound)).type, atBound);
    assert.equal(unknownOf(named(`${atBound}x`)).type, null);
    assert.equal(unknownOf(named('control_Ünicode')).type, null);
    const sub = (subtype: string): ControlLine | null =>
      control(JSON.stringify({ type: 'control_request', request_id: 'r', request: { subtype } }));
    assert.equal(unknownOf(sub('s'.repeat(MAX_CONTROL_NAME_CHARS))).subtype, 's'.repeat(MAX_CONTROL_NAME_CHARS));
    assert.equal(unknownOf(sub('s'.repeat(MAX_CONTROL_NAME_CHARS + 1))).subtype, null);
  });
});

describe('lines for the native stdin', () => {
  it('a user message of any size is one line, the text kept exactly', () => {
    const text = `line one\nline "two" ${'é'.repeat(200_000)}`;
    const line = userMessageLine(text);
    assert.equal(line.includes('\n'), false);
    assert.deepEqual(JSON.parse(line), { type: 'user', message: { role: 'user', content: text } });
  });

  it('allow echoes the native’s own input and nothing else (no updatedPermissions)', () => {
    const q = canUse(control(REAL_REQUEST));
    assert.deepEqual(JSON.parse(allowLine(q)), {
      type: 'control_response',
      response: { subtype: 'success', request_id: q.requestId, response: { behavior: 'allow', updatedInput: q.input } },
    });
  });

  it(`deny carries the message the model reads; up to ${MAX_CONTROL_DENY_MESSAGE_CHARS} characters, more throws`, () => {
    assert.deepEqual(JSON.parse(denyLine('r-1', 'not here')), {
      type: 'control_response',
      response: { subtype: 'success', request_id: 'r-1', response: { behavior: 'deny', message: 'not here' } },
    });
    assert.equal(
      JSON.parse(denyLine('r-1', 'm'.repeat(MAX_CONTROL_DENY_MESSAGE_CHARS))).response.response.message.length,
      MAX_CONTROL_DENY_MESSAGE_CHARS,
    );
    assert.throws(() => denyLine('r-1', 'm'.repeat(MAX_CONTROL_DENY_MESSAGE_CHARS + 1)), RangeError);
  });

  it('error response and interrupt request: their shapes; a bad id or an over-long error throws', () => {
    assert.deepEqual(JSON.parse(errorResponseLine('r-2', 'not served')), {
      type: 'control_response',
      response: { subtype: 'error', request_id: 'r-2', error: 'not served' },
    });
    assert.throws(() => errorResponseLine('r-2', 'e'.repeat(MAX_CONTROL_ERROR_CHARS + 1)), RangeError);
    assert.deepEqual(JSON.parse(interruptLine('int-1')), {
      type: 'control_request',
      request_id: 'int-1',
      request: { subtype: 'interrupt' },
    });
    for (const id of ['', 'a b', 'i'.repeat(MAX_CONTROL_REQUEST_ID_CHARS + 1)]) {
      assert.throws(() => interruptLine(id), RangeError);
      assert.throws(() => denyLine(id, 'no'), RangeError);
    }
  });

  it('what this package writes is never taken as a request when read back', () => {
    // An interrupt request read as if the native wrote it: not a can_use_tool.
    assert.equal(unknownOf(control(interruptLine('int-1'))).reason, 'unknown_subtype');
    // An allow read back is a response, never a question.
    assert.equal(control(allowLine(canUse(control(REAL_REQUEST))))?.kind, 'response');
  });
});
