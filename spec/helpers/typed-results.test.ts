// The spec readers (spec/helpers/typed-results.ts) must fail on a wrong shape, naming where it broke:
// they replace casts, so a reader that let a wrong shape through would hide what a cast used to hide.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  arr,
  at,
  lookup,
  callToolResultOf,
  eventPageOf,
  jsonLines,
  obj,
  objAt,
  objs,
  parseObj,
  questionsOf,
  rpcError,
  rpcResult,
  toolBody,
  toolResultOf,
} from './typed-results.ts';

test('at walks objects and arrays; a missing last member is undefined, a broken step throws naming the path', () => {
  assert.equal(at({ a: [{ b: 1 }] }, 'a', 0, 'b'), 1);
  assert.equal(at({ a: {} }, 'a', 'b'), undefined);
  assert.throws(() => at({ a: 1 }, 'a', 'b'), /\$\.a is not an object: 1/);
  assert.throws(() => at({ a: { b: 2 } }, 'a', 0), /\$\.a is not an array/);
  assert.throws(() => at(undefined, 'a'), /\$ is not an object: undefined/);
  assert.throws(() => objAt({ a: [] }, 'a'), /\$\.a is not an object/);
});

test('lookup is undefined wherever a step is missing, for members optional on purpose', () => {
  assert.equal(lookup({ delta: { text: 'a' } }, 'delta', 'text'), 'a');
  assert.equal(lookup({ type: 'message_stop' }, 'delta', 'text'), undefined);
  assert.equal(lookup(null, 'a', 0), undefined);
  assert.equal(lookup({ a: [5] }, 'a', 0), 5);
});

test('obj, arr and objs accept only their shape', () => {
  assert.deepEqual(obj({ x: 1 }), { x: 1 });
  assert.throws(() => obj([], 'the thing'), /the thing is not an object/);
  assert.throws(() => obj(null), /not an object: null/);
  assert.deepEqual(arr([1]), [1]);
  assert.throws(() => arr({}), /not an array/);
  assert.throws(() => objs([{}, 2], 'runs'), /runs\[1\] is not an object: 2/);
});

test('JSON texts: an object per text or line, or a clear failure', () => {
  assert.deepEqual(parseObj('{"a":1}'), { a: 1 });
  assert.throws(() => parseObj('[1]', 'the report'), /the report is not an object/);
  assert.throws(() => parseObj('{', 'the report'), /the report is not JSON/);
  assert.deepEqual(jsonLines('{"a":1}\n\n{"b":2}\n'), [{ a: 1 }, { b: 2 }]);
  assert.throws(() => jsonLines('{"a":1}\n7\n'), /line 2 is not an object/);
});

test('JSON-RPC responses: rpcResult and rpcError each refuse the other kind', () => {
  assert.deepEqual(rpcResult({ jsonrpc: '2.0', id: 1, result: { a: 1 } }), { a: 1 });
  assert.throws(
    () => rpcResult({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } }),
    /expected a result, got: .*-32601/,
  );
  assert.deepEqual(rpcError({ error: { code: -32602, message: 'Invalid params', data: { path: '/x' } } }), {
    code: -32602,
    message: 'Invalid params',
    data: { path: '/x' },
  });
  assert.deepEqual(rpcError({ error: { code: -32601, message: 'Method not found' } }), { code: -32601, message: 'Method not found' });
  assert.throws(() => rpcError({ result: {} }), /expected an error/);
  assert.throws(() => rpcError({ error: { code: '1', message: 'm' } }), /error\.code is not a number/);
});

test('tool results: structuredContent first, else the JSON after the first text line; content items checked', () => {
  const structured = { content: [{ type: 'text', text: 'line' }], structuredContent: { result: { run_id: 'r' } }, isError: false };
  assert.deepEqual(toolResultOf(structured), { run_id: 'r' });
  assert.deepEqual(toolBody({ content: [{ type: 'text', text: 'summary\n{"result":null,"error":{"code":"x"}}' }] }), {
    result: null,
    error: { code: 'x' },
  });
  assert.throws(() => toolResultOf({ content: [{ type: 'text', text: 'summary\n{"result":null}' }] }), /\$\.result is not an object: null/);
  assert.deepEqual(callToolResultOf(structured), structured);
  assert.equal(callToolResultOf({ content: [] }).isError, false);
  assert.throws(() => callToolResultOf({ content: [{ type: 'text' }] }), /content\[0\]\.text is not a string/);
  assert.throws(() => callToolResultOf({ content: [], isError: 'yes' }), /isError is not a boolean/);
});

test('domain views: an events page and permission questions are checked member by member', () => {
  const page = {
    run_id: 'run_1',
    state: 'completed',
    completed: true,
    events: [{ seq: 1, event: { type: 'result' } }],
    next_cursor: 'c',
    has_more: false,
    missed_events: 0,
    stale_cursor: false,
    events_total: 1,
    events_retained: 1,
    bytes_retained: 20,
    events_dropped: 0,
    events_omitted: 0,
  };
  assert.deepEqual(eventPageOf(page), page);
  assert.throws(() => eventPageOf({ ...page, has_more: 'no' }), /has_more is not a boolean/);
  assert.throws(() => eventPageOf({ ...page, missed_events: 1.5 }), /missed_events is not an integer/);
  assert.throws(() => eventPageOf({ ...page, events: [{ seq: 1 }] }), /events\[0\]\.event is not an object/);
  assert.deepEqual(questionsOf({ pending: [], decided: [{ behavior: 'allow' }], decided_dropped: 0 }), {
    pending: [],
    decided: [{ behavior: 'allow' }],
    decided_dropped: 0,
  });
  assert.throws(() => questionsOf({ pending: [], decided: [1], decided_dropped: 0 }), /decided\[0\] is not an object/);
});
