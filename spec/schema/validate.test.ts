import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonSchema } from '../../lib/contracts/providers.ts';
import { validate } from '../../lib/schema/validate.ts';
import { escapePointerToken, MAX_POINTER_TOKEN_CHARS } from '../../lib/util/json-pointer.ts';

const RUN: JsonSchema = {
  type: 'object',
  properties: {
    prompt: { type: 'string', minLength: 1, maxLength: 5 },
    timeout_seconds: { type: 'integer', minimum: 1, maximum: 1800 },
    budget: { type: 'number', exclusiveMinimum: 0 },
    mode: { type: 'string', enum: ['dontAsk', 'plan'] },
    session_id: { type: 'string', format: 'uuid' },
    name: { type: 'string', pattern: '^[a-z]+$' },
    allowed_tools: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, maxItems: 3 },
    verbose: { type: 'boolean' },
    nothing: { type: 'null' },
    nested: { type: 'object', properties: { 'a/b~c': { type: 'integer' } } },
    open: { type: 'object' },
  },
  required: ['prompt'],
  additionalProperties: false,
};

const UUID = '123e4567-e89b-12d3-a456-426614174000';
type Case = [string, unknown, string | null, string?];

// [title, value, expected path (null = valid), expected message fragment]
const CASES: Case[] = [
  ['minimal valid', { prompt: 'hi' }, null],
  [
    'everything valid',
    {
      prompt: 'hello',
      timeout_seconds: 1800,
      budget: 0.01,
      mode: 'plan',
      session_id: UUID,
      name: 'abc',
      allowed_tools: ['a', 'b', 'c'],
      verbose: true,
      nothing: null,
      nested: { 'a/b~c': 1 },
      open: { anything: [1] },
    },
    null,
  ],
  ['not an object', 'x', '', 'must be an object'],
  ['array is not an object', [], '', 'must be an object'],
  ['null is not an object', null, '', 'must be an object'],
  ['missing required', {}, '/prompt', 'is required'],
  ['additional property', { prompt: 'a', extra: 1 }, '/extra', 'is not an allowed property'],
  ['minLength bound', { prompt: '' }, '/prompt', 'at least 1'],
  ['maxLength exactly at bound', { prompt: 'abcde' }, null],
  ['maxLength one past', { prompt: 'abcdef' }, '/prompt', 'at most 5'],
  ['maxLength counts code points', { prompt: '😀😀😀😀😀' }, null],
  ['maxLength code points one past', { prompt: '😀😀😀😀😀😀' }, '/prompt', 'at most 5'],
  ['integer type', { prompt: 'a', timeout_seconds: 1.5 }, '/timeout_seconds', 'must be an integer'],
  ['integer not a string', { prompt: 'a', timeout_seconds: '10' }, '/timeout_seconds', 'must be an integer'],
  ['minimum exactly', { prompt: 'a', timeout_seconds: 1 }, null],
  ['minimum one below', { prompt: 'a', timeout_seconds: 0 }, '/timeout_seconds', 'at least 1'],
  ['maximum exactly', { prompt: 'a', timeout_seconds: 1800 }, null],
  ['maximum one past', { prompt: 'a', timeout_seconds: 1801 }, '/timeout_seconds', 'at most 1800'],
  ['exclusiveMinimum at bound', { prompt: 'a', budget: 0 }, '/budget', 'greater than 0'],
  ['number type', { prompt: 'a', budget: 'x' }, '/budget', 'must be a number'],
  ['enum', { prompt: 'a', mode: 'bypassPermissions' }, '/mode', 'must be one of: "dontAsk", "plan"'],
  ['uuid', { prompt: 'a', session_id: 'not-a-uuid' }, '/session_id', 'must be a UUID'],
  ['uuid with trailing junk', { prompt: 'a', session_id: `${UUID}x` }, '/session_id', 'must be a UUID'],
  ['pattern', { prompt: 'a', name: 'ABC' }, '/name', 'pattern'],
  ['array type', { prompt: 'a', allowed_tools: 'Bash' }, '/allowed_tools', 'must be an array'],
  ['minItems', { prompt: 'a', allowed_tools: [] }, '/allowed_tools', 'at least 1 items'],
  ['maxItems exactly', { prompt: 'a', allowed_tools: ['a', 'b', 'c'] }, null],
  ['maxItems one past', { prompt: 'a', allowed_tools: ['a', 'b', 'c', 'd'] }, '/allowed_tools', 'at most 3 items'],
  ['items path', { prompt: 'a', allowed_tools: ['a', 'b', ''] }, '/allowed_tools/2', 'at least 1'],
  ['boolean', { prompt: 'a', verbose: 'yes' }, '/verbose', 'must be a boolean'],
  ['null type', { prompt: 'a', nothing: 0 }, '/nothing', 'must be null'],
  ['pointer escaping', { prompt: 'a', nested: { 'a/b~c': 'x' } }, '/nested/a~1b~0c', 'must be an integer'],
  ['additional property name escaped', { 'prompt': 'a', 'x/y': 1 }, '/x~1y', 'is not an allowed property'],
];

describe('validate', () => {
  for (const [title, value, path, fragment] of CASES) {
    it(title, () => {
      const result = validate(RUN, value);
      if (path === null) {
        assert.deepEqual(result, { ok: true });
        return;
      }
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.equal(result.path, path);
      assert.ok(fragment !== undefined && result.message.includes(fragment), result.message);
    });
  }

  it('never echoes the submitted value', () => {
    const secret = 'SECRET-VALUE-123';
    for (const value of [
      { prompt: secret },
      { prompt: 'a', mode: secret },
      { prompt: 'a', session_id: secret },
      { prompt: 'a', name: secret },
      { prompt: 'a', timeout_seconds: secret },
    ]) {
      const result = validate(RUN, value);
      assert.equal(result.ok, false);
      assert.ok(!JSON.stringify(result).includes(secret), JSON.stringify(result));
    }
  });

  it('schemas without a type check by the runtime type', () => {
    assert.deepEqual(validate({ minimum: 3 }, 'text'), { ok: true });
    assert.equal(validate({ minimum: 3 }, 2).ok, false);
    assert.deepEqual(validate({}, { anything: true }), { ok: true });
  });

  it('non-finite numbers are not numbers', () => {
    assert.equal(validate({ type: 'number' }, Number.POSITIVE_INFINITY).ok, false);
    assert.equal(validate({ type: 'integer' }, Number.NaN).ok, false);
  });

  it('inherited names are neither required matches nor known properties', () => {
    const schema: JsonSchema = { type: 'object', properties: {}, required: ['toString'], additionalProperties: false };
    assert.deepEqual(validate(schema, {}), { ok: false, path: '/toString', message: 'is required' });
    const open: JsonSchema = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false };
    assert.deepEqual(validate(open, JSON.parse('{"__proto__": 1}')), {
      ok: false,
      path: '/__proto__',
      message: 'is not an allowed property',
    });
  });

  it('cuts very long property names in paths', () => {
    const exact = 'k'.repeat(MAX_POINTER_TOKEN_CHARS);
    assert.equal(escapePointerToken(exact), exact);
    assert.equal(escapePointerToken(`${exact}k`), `${exact}…`);
  });
});
