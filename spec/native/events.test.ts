import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EVENT_KINDS, getArray, getBoolean, getNumber, getObject, getString, parseNativeEvent } from '../../lib/native/events.ts';
import type { EventKind } from '../../lib/native/events.ts';
import { lines } from '../runs/capture.ts';

function kinds(name: string): EventKind[] {
  return lines(name).map((line) => {
    const parsed = parseNativeEvent(line);
    assert.equal(parsed.ok, true, line.slice(0, 80));
    return parsed.ok ? parsed.kind : 'other';
  });
}

test('real golden stream: kinds in native order, result last although its key order starts elsewhere', () => {
  assert.deepEqual(kinds('golden-ok-stream-partial'), [
    'system_init',
    'system_status',
    'stream_event',
    'stream_event',
    'stream_event',
    'stream_event',
    'stream_event',
    'assistant',
    'stream_event',
    'stream_event',
    'stream_event',
    'result',
  ]);
  const last = lines('golden-ok-stream-partial').at(-1) ?? '';
  assert.ok(!last.startsWith('{"type"'), 'the capture really has type late in the key order');
});

test('real captures: api_retry, permission_denied, user kinds', () => {
  assert.equal(kinds('err-def-http_529').filter((k) => k === 'system_api_retry').length, 2);
  assert.ok(kinds('perm-dontAsk__bash_redirect').includes('system_permission_denied'));
  assert.ok(kinds('golden-tool-turn-partial').includes('user'));
});

test('every kind is reachable from type/subtype alone', () => {
  const cases: Array<[string, EventKind]> = [
    ['{"subtype":"init","type":"system"}', 'system_init'],
    ['{"type":"system","subtype":"status"}', 'system_status'],
    ['{"type":"system","subtype":"api_retry"}', 'system_api_retry'],
    ['{"type":"system","subtype":"permission_denied"}', 'system_permission_denied'],
    ['{"type":"system","subtype":"model_fallback"}', 'system_other'],
    ['{"type":"system"}', 'system_other'],
    ['{"type":"stream_event"}', 'stream_event'],
    ['{"type":"assistant"}', 'assistant'],
    ['{"type":"user"}', 'user'],
    ['{"result":"x","type":"result"}', 'result'],
    ['{"type":"rate_limit_event"}', 'other'],
    ['{"type":7}', 'other'],
    ['{}', 'other'],
  ];
  for (const [line, kind] of cases) {
    const parsed = parseNativeEvent(Buffer.from(line));
    assert.deepEqual(parsed.ok && parsed.kind, kind, line);
  }
  assert.deepEqual(new Set(cases.map(([, k]) => k)), new Set(EVENT_KINDS));
});

test('non-objects and non-JSON are not events', () => {
  for (const line of ['', '   ', 'hello', '[1,2]', '"s"', '42', 'null', 'true', '{"type":"result"', '{"a":1}x']) {
    assert.deepEqual(parseNativeEvent(line), { ok: false }, line);
  }
});

test('unknown extension fields and nested data are retained', () => {
  const parsed = parseNativeEvent('{"type":"result","x_future":{"deep":[1,{"k":null}]},"__proto__":{"polluted":true}}');
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.event['x_future'], { deep: [1, { k: null }] });
  assert.ok(Object.hasOwn(parsed.event, '__proto__'), 'kept as data');
  const fresh: Record<string, unknown> = {};
  assert.equal(fresh['polluted'], undefined, 'Object.prototype was not polluted');
});

test('multibyte UTF-8 from a Buffer survives', () => {
  const parsed = parseNativeEvent(Buffer.from('{"type":"assistant","t":"ünï 🎉"}', 'utf8'));
  assert.ok(parsed.ok);
  assert.equal(parsed.event['t'], 'ünï 🎉');
});

test('typed readers return null for absent or wrong-typed fields', () => {
  const event = { s: 'x', n: 3, b: false, o: { a: 1 }, a: [1], inf: 'Infinity' };
  assert.equal(getString(event, 's'), 'x');
  assert.equal(getString(event, 'n'), null);
  assert.equal(getNumber(event, 'n'), 3);
  assert.equal(getNumber(event, 's'), null);
  assert.equal(getBoolean(event, 'b'), false);
  assert.equal(getBoolean(event, 'n'), null);
  assert.deepEqual(getObject(event, 'o'), { a: 1 });
  assert.equal(getObject(event, 'a'), null);
  assert.deepEqual(getArray(event, 'a'), [1]);
  assert.equal(getArray(event, 'o'), null);
  assert.equal(getString(null, 's'), null);
  assert.equal(getNumber(undefined, 'n'), null);
});
