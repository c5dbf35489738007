import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getNativeEnv, isRecursiveLaunch, RECURSION_SENTINEL } from '../../lib/native/native-env.ts';
import { encodeProjectPath } from '../../lib/native/transcripts.ts';

test('native env drops reserved host metadata and adds the recursion sentinel', () => {
  const env = getNativeEnv({ PATH: '/bin', COMPUTER_MCP_TOKEN: 'secret', computer_mcp_x: 'y', KEEP: 'v', GONE: undefined }, '1.2.3');
  assert.equal(env['PATH'], '/bin');
  assert.equal(env['KEEP'], 'v');
  assert.ok(!('COMPUTER_MCP_TOKEN' in env));
  assert.ok(!('computer_mcp_x' in env));
  assert.ok(!('GONE' in env));
  assert.equal(env[RECURSION_SENTINEL], '1');
  assert.equal(env['CLAUDE_AGENT_SDK_CLIENT_APP'], 'claude-run-mcp/1.2.3');
  assert.equal(isRecursiveLaunch(env), true);
  assert.equal(isRecursiveLaunch({ PATH: '/bin' }), false);
});

test('project folder encoding matches the measured native rule', () => {
  assert.equal(encodeProjectPath('/x/My Project.v2_x-y'), '-x-My-Project-v2-x-y');
  assert.equal(encodeProjectPath('/x/ünï cødé'), '-x--n--c-d-');
  const long = '/' + 'a'.repeat(250);
  const enc = encodeProjectPath(long);
  assert.equal(enc.slice(0, 200), '-' + 'a'.repeat(199));
  assert.match(enc, /^-a{199}-[0-9a-z]+$/);
});
