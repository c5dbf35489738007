import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyJsonObject } from '../../lib/util/json.ts';

describe('copyJsonObject', () => {
  it('copies a JSON-shaped value deeply, readonly arrays included, and shares nothing with it', () => {
    const tree = { a: [1, 'x', true, null, { b: [] as readonly number[] }], c: { d: 2.5 } } as const;
    const copy = copyJsonObject(tree);
    assert.deepEqual(copy, tree);
    assert.notEqual(copy['a'], tree.a);
    assert.notEqual(copy['c'], tree.c);
  });

  it('leaves out undefined properties, as JSON.stringify does, and keeps a "__proto__" key a key', () => {
    assert.deepEqual(copyJsonObject({ a: 1, b: undefined }), { a: 1 });
    const copy = copyJsonObject(JSON.parse('{"__proto__": {"polluted": true}}'));
    assert.deepEqual(Object.keys(copy), ['__proto__']);
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  });

  it('refuses what JSON cannot hold, naming its JSON path and never its value', () => {
    const refuse = (value: object): string => {
      try {
        copyJsonObject(value);
      } catch (error) {
        assert.ok(error instanceof TypeError);
        return error.message;
      }
      assert.fail('accepted');
    };
    assert.equal(refuse({ a: [0, Number.NaN] }), '/a/1: not a JSON value');
    assert.equal(refuse({ 'x/y~': { f: () => 'SECRET' } }), '/x~1y~0/f: not a JSON value');
    assert.equal(refuse({ d: new Date(0) }), '/d: not a JSON value');
    assert.equal(refuse([1]), '/: not a JSON object');
  });
});
