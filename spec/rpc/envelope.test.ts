import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { classifyMessage, idKey } from '../../lib/rpc/envelope.ts';

describe('classifyMessage', () => {
  const cases: [string, unknown, unknown][] = [
    ['request', { jsonrpc: '2.0', id: 1, method: 'ping' }, { kind: 'request', id: 1, method: 'ping', params: undefined }],
    [
      'request with string id and params',
      { jsonrpc: '2.0', id: 'a', method: 'm', params: { x: 1 } },
      { kind: 'request', id: 'a', method: 'm', params: { x: 1 } },
    ],
    [
      'request with array params (checked later)',
      { jsonrpc: '2.0', id: 2, method: 'm', params: [1] },
      { kind: 'request', id: 2, method: 'm', params: [1] },
    ],
    [
      'notification',
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { kind: 'notification', method: 'notifications/initialized', params: undefined },
    ],
    ['response with result', { jsonrpc: '2.0', id: 7, result: {} }, { kind: 'response', id: 7 }],
    ['response with error', { jsonrpc: '2.0', id: null, error: { code: 1, message: 'x' } }, { kind: 'response', id: null }],
    ['not an object', 42, { kind: 'invalid', id: null }],
    ['null', null, { kind: 'invalid', id: null }],
    ['wrong version keeps a readable id', { jsonrpc: '1.0', id: 3, method: 'ping' }, { kind: 'invalid', id: 3 }],
    ['missing version', { id: 3, method: 'ping' }, { kind: 'invalid', id: 3 }],
    ['null id request', { jsonrpc: '2.0', id: null, method: 'ping' }, { kind: 'invalid', id: null }],
    ['object id', { jsonrpc: '2.0', id: {}, method: 'ping' }, { kind: 'invalid', id: null }],
    ['non-string method', { jsonrpc: '2.0', id: 4, method: 5 }, { kind: 'invalid', id: 4 }],
    ['primitive params', { jsonrpc: '2.0', id: 5, method: 'ping', params: 'x' }, { kind: 'invalid', id: 5 }],
    ['empty object', { jsonrpc: '2.0' }, { kind: 'invalid', id: null }],
    // A method without an id key is a notification whatever else is wrong: it must never be answered.
    ['notification with primitive params', { jsonrpc: '2.0', method: 'x', params: 5 }, { kind: 'invalid-notification', method: 'x' }],
    ['notification with a wrong version', { jsonrpc: '1.0', method: 'x' }, { kind: 'invalid-notification', method: 'x' }],
    ['notification without a version', { method: 'x' }, { kind: 'invalid-notification', method: 'x' }],
    ['notification with a non-string method', { jsonrpc: '2.0', method: 5 }, { kind: 'invalid-notification', method: null }],
    ['notification with a null method', { jsonrpc: '2.0', method: null, params: {} }, { kind: 'invalid-notification', method: null }],
    [
      'the largest safe integer id is a request',
      { jsonrpc: '2.0', id: Number.MAX_SAFE_INTEGER, method: 'ping' },
      { kind: 'request', id: Number.MAX_SAFE_INTEGER, method: 'ping', params: undefined },
    ],
    [
      'the smallest safe integer id is a request',
      { jsonrpc: '2.0', id: -Number.MAX_SAFE_INTEGER, method: 'ping' },
      { kind: 'request', id: -Number.MAX_SAFE_INTEGER, method: 'ping', params: undefined },
    ],
    [
      'an integer id past 2^53-1 is refused (it was rounded when parsed)',
      { jsonrpc: '2.0', id: JSON.parse('9007199254740993'), method: 'ping' },
      { kind: 'invalid', id: null, idOutOfRange: true },
    ],
    ['a huge integer id is refused', { jsonrpc: '2.0', id: 1e21, method: 'ping' }, { kind: 'invalid', id: null, idOutOfRange: true }],
    [
      'an id key (even null) makes it an invalid request, answered',
      { jsonrpc: '2.0', id: null, method: 'x', params: 5 },
      { kind: 'invalid', id: null },
    ],
  ];
  for (const [title, input, expected] of cases) {
    it(title, () => assert.deepEqual(classifyMessage(input), expected));
  }

  it('keeps numeric and string ids apart', () => {
    assert.notEqual(idKey(1), idKey('1'));
  });
});
