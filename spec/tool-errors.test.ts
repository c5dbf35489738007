import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isToolError, ToolError } from '../lib/tool-errors.ts';

test('isToolError: a ToolError is one, an Error that only carries a tool error code is not', () => {
  const real = new ToolError('invalid_arguments', 'bad', '/prompt');
  assert.equal(isToolError(real), true);
  assert.deepEqual(real.toData(), { code: 'invalid_arguments', message: 'bad', path: '/prompt' });
  const lookAlike = Object.assign(new Error('bad'), { code: 'invalid_arguments' });
  assert.equal(isToolError(lookAlike), false);
  assert.equal(isToolError({ code: 'invalid_arguments', message: 'bad' }), false);
});
