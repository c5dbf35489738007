// Every session and permission rule is an input error through tools/call, before anything is spawned:
// the fake writes a line for every invocation (the version check included), so "no line" proves it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/util/json.ts';
import { firstText, parseObj, rpcResult } from '../helpers/typed-results.ts';
import { createSessionHarness } from './helpers.ts';

const A = '6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5';
const B = '7a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';

const RULES: Array<[string, JsonObject, string, string]> = [
  ['session_id with resume_session_id', { session_id: A, resume_session_id: B }, 'invalid_arguments', '/resume_session_id'],
  ['session_id with continue_previous', { session_id: A, continue_previous: true }, 'invalid_arguments', '/continue_previous'],
  [
    'resume_session_id with continue_previous',
    { resume_session_id: A, continue_previous: true },
    'invalid_arguments',
    '/continue_previous',
  ],
  [
    'all three session choices',
    { session_id: A, resume_session_id: B, continue_previous: true },
    'invalid_arguments',
    '/resume_session_id',
  ],
  ['session_id that is not a UUID', { session_id: 'my-session' }, 'invalid_arguments', '/session_id'],
  ['resume_session_id that is not a UUID', { resume_session_id: 'last' }, 'invalid_arguments', '/resume_session_id'],
  [
    'no_session_persistence with resume',
    { no_session_persistence: true, resume_session_id: A },
    'invalid_arguments',
    '/no_session_persistence',
  ],
  [
    'no_session_persistence with continue',
    { no_session_persistence: true, continue_previous: true },
    'invalid_arguments',
    '/no_session_persistence',
  ],
  ['fork_session alone', { fork_session: true }, 'invalid_arguments', '/fork_session'],
  ['fork_session with a new session_id', { fork_session: true, session_id: A }, 'invalid_arguments', '/fork_session'],
  ['a bypass permission mode', { permission_mode: 'bypassPermissions' }, 'invalid_arguments', '/permission_mode'],
  ['an argument that tries to set acquired_by', { acquired_by: A }, 'invalid_arguments', '/acquired_by'],
  ['a dangerous native flag as an argument', { dangerously_skip_permissions: true }, 'invalid_arguments', '/dangerously_skip_permissions'],
  [
    'a broad allow with a carve-out deny',
    { allowed_tools: ['Bash(git:*)'], disallowed_tools: ['Bash(git commit:*)'] },
    'permission_rule_fails_open',
    '/disallowed_tools/0',
  ],
  [
    'an unrestricted tool allow with a carve-out deny',
    { allowed_tools: ['Bash'], disallowed_tools: ['Read', 'Bash(rm:*)'] },
    'permission_rule_fails_open',
    '/disallowed_tools/1',
  ],
];

test('every exclusivity and permission rule is an input error before anything is spawned', async () => {
  const h = await createSessionHarness();
  try {
    for (const tool of ['claude.run', 'claude.run.start']) {
      for (const [name, extra, code, path] of RULES) {
        const out = await h.call(tool, { prompt: 'x', cwd: h.dir, ...extra }, { 'io.github.computer-mcp/work-invocation': A });
        assert.equal(out.isError, true, `${tool} ${name}`);
        assert.equal(out.error?.code, code, `${tool} ${name}: ${out.error?.message}`);
        assert.equal(out.error?.path, path, `${tool} ${name}`);
        assert.equal(out.result, null, `${tool} ${name}: no run object`);
      }
    }
    assert.deepEqual(h.lines(), [], 'the fake CLI was never started (not even for a version check)');
    const list = await h.call('claude.run.list', {});
    assert.deepEqual(list.result?.['runs'], []);
    const work = await h.request('resources/read', { uri: 'computer-mcp://runtime/work/v1' });
    const body = parseObj(firstText(rpcResult(work), 'contents'), 'the work snapshot');
    assert.equal(body['revision'], 0, 'no reservation happened');
  } finally {
    await h.close();
  }
});

test('the carve-out error explains why it fails open and what to use instead', async () => {
  const h = await createSessionHarness();
  try {
    const out = await h.call('claude.run', { prompt: 'x', allowed_tools: ['Bash(git:*)'], disallowed_tools: ['Bash(git commit:*)'] });
    const message = String(out.error?.message);
    assert.match(message, /before the subcommand/);
    assert.match(message, /fails open/);
    assert.match(message, /Allow only the exact commands/);
    // The fail-closed alternative is accepted and forwarded.
    const ok = await h.call('claude.run', {
      prompt: 'x',
      allowed_tools: ['Bash(git status:*)', 'Bash(git diff:*)'],
      disallowed_tools: ['Write'],
    });
    assert.equal(ok.isError, false, ok.text);
  } finally {
    await h.close();
  }
});
