// The declared control messages (cli-tree.json stdin_channel) and the code that reads and writes them agree.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { matchesControlShape } from '../../lib/native/control-shape.ts';
import type { ControlShape } from '../../lib/native/control-shape.ts';
import { allowLine, denyLine, errorResponseLine, interruptLine, parseControlLine, userMessageLine } from '../../lib/native/control.ts';
import type { CanUseToolRequest } from '../../lib/native/control.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import type { JsonObject, JsonValue } from '../../lib/util/json.ts';

const { native_reads: reads, native_writes: writes } = CLI_TREE.stdin_channel;

/** A concrete line of a declared shape: every placeholder filled with a value of its type. */
function instance(shape: ControlShape): JsonValue {
  if (typeof shape === 'string') {
    if (shape.startsWith('<string:')) return `v-${shape.slice(8, -1)}`;
    if (shape.startsWith('<object:')) return { filled: shape.slice(8, -1) };
    if (shape.startsWith('<array:')) return [];
    return shape;
  }
  if (shape === null || typeof shape !== 'object') return shape;
  if (Array.isArray(shape)) return (shape as readonly ControlShape[]).map(instance);
  return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, instance(v)]));
}
const obj = (line: string): JsonObject => JSON.parse(line) as JsonObject;

describe('matchesControlShape', () => {
  const shape: ControlShape = { type: 'x', id: '<string:id>', body: '<object:body>', list: '<array:list>', n: 1 };
  it('placeholders take any value of their type; constants must be equal', () => {
    assert.equal(matchesControlShape({ type: 'x', id: 'a', body: {}, list: [1], n: 1 }, shape, true), true);
    assert.equal(matchesControlShape({ type: 'y', id: 'a', body: {}, list: [], n: 1 }, shape, true), false);
    assert.equal(matchesControlShape({ type: 'x', id: 7, body: {}, list: [], n: 1 }, shape, true), false);
    assert.equal(matchesControlShape({ type: 'x', id: 'a', body: [], list: [], n: 1 }, shape, true), false);
    assert.equal(matchesControlShape({ type: 'x', id: 'a', body: {}, list: {}, n: 1 }, shape, true), false);
    assert.equal(matchesControlShape({ type: 'x', id: 'a', body: {}, list: [], n: 2 }, shape, true), false);
  });
  it('a missing key never matches; an extra key matches only when not exact', () => {
    assert.equal(matchesControlShape({ type: 'x', id: 'a', body: {}, list: [] }, shape, false), false);
    const extra = { type: 'x', id: 'a', body: {}, list: [], n: 1, more: true };
    assert.equal(matchesControlShape(extra, shape, false), true);
    assert.equal(matchesControlShape(extra, shape, true), false);
  });
});

describe('control.ts against the declared shapes', () => {
  const request = parseControlLine(instance(writes.can_use_tool) as JsonObject);
  it('a line of the declared can_use_tool shape is recognised, its input kept', () => {
    assert.equal(request?.kind, 'can_use_tool');
    assert.deepEqual((request as CanUseToolRequest).input, { filled: 'input' });
  });
  it('a line of the declared interrupt_ack shape is a success response', () => {
    assert.deepEqual(parseControlLine(instance(writes.interrupt_ack) as JsonObject), {
      kind: 'response',
      outcome: 'success',
      requestId: 'v-request_id',
    });
  });
  it('every line written to the native has exactly its declared shape', () => {
    const q = request as CanUseToolRequest;
    const written: Array<[string, ControlShape]> = [
      [userMessageLine('hello'), reads.user],
      [allowLine(q), reads.allow],
      [denyLine('r-1', 'no'), reads.deny],
      [errorResponseLine('r-1', 'not served'), reads.error],
      [interruptLine('int-1'), reads.interrupt],
    ];
    for (const [line, shape] of written) assert.equal(matchesControlShape(obj(line), shape, true), true, line);
    assert.equal(matchesControlShape(obj(denyLine('r-1', 'no')), reads.allow, true), false, 'a deny is not an allow');
    assert.equal(matchesControlShape(obj(allowLine(q)), reads.deny, true), false, 'an allow is not a deny');
  });
});
