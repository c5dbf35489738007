import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRunInput } from '../../lib/tools/run-input.ts';
import { checkPermissionRules } from '../../lib/native/permission-rules.ts';
import { isToolError } from '../../lib/tool-errors.ts';
import type { JsonObject } from '../../lib/util/json.ts';

const ctx = {
  nativeArgNames: new Set([
    'model',
    'session_id',
    'resume_session_id',
    'continue_previous',
    'fork_session',
    'no_session_persistence',
    'allowed_tools',
    'disallowed_tools',
    'permission_mode',
  ]),
  defaultCwd: '/srv/default',
  isDirectory: (p: string) => p === '/srv/default' || p === '/tmp',
};
const ID = '6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5';

function errorOf(fn: () => unknown): { code: string; path: string | undefined } {
  try {
    fn();
  } catch (error) {
    assert.ok(isToolError(error));
    return { code: error.code, path: error.path };
  }
  assert.fail('expected a ToolError');
}

test('defaults: dontAsk, server cwd, 600 s, fresh session, only supplied native options', () => {
  const req = parseRunInput({ prompt: 'hi', model: 'sonnet' }, ctx);
  assert.equal(req.permissionMode, 'dontAsk');
  assert.equal(req.cwd, '/srv/default');
  assert.equal(req.timeoutMs, 600_000);
  assert.equal(req.idleTimeoutMs, null);
  assert.deepEqual(req.session, { kind: 'fresh' });
  assert.deepEqual(req.nativeOptions, { model: 'sonnet' });
});

test('cwd must be absolute and an existing directory', () => {
  assert.deepEqual(
    errorOf(() => parseRunInput({ prompt: 'x', cwd: 'rel/dir' }, ctx)),
    { code: 'invalid_arguments', path: '/cwd' },
  );
  assert.deepEqual(
    errorOf(() => parseRunInput({ prompt: 'x', cwd: '/nope' }, ctx)),
    { code: 'invalid_arguments', path: '/cwd' },
  );
  assert.equal(parseRunInput({ prompt: 'x', cwd: '/tmp' }, ctx).cwd, '/tmp');
});

const exclusivity: Array<[string, JsonObject, string | null]> = [
  ['new + resume', { session_id: ID, resume_session_id: ID }, '/resume_session_id'],
  ['new + continue', { session_id: ID, continue_previous: true }, '/continue_previous'],
  ['resume + continue', { resume_session_id: ID, continue_previous: true }, '/continue_previous'],
  ['no persistence + resume', { resume_session_id: ID, no_session_persistence: true }, '/no_session_persistence'],
  ['no persistence + continue', { continue_previous: true, no_session_persistence: true }, '/no_session_persistence'],
  ['fork alone', { fork_session: true }, '/fork_session'],
  ['fork + new id', { fork_session: true, session_id: ID }, '/fork_session'],
  ['no persistence + new id is fine', { session_id: ID, no_session_persistence: true }, null],
  ['continue_previous false is not a choice', { session_id: ID, continue_previous: false }, null],
];
for (const [name, extra, path] of exclusivity) {
  test(`session rule: ${name}`, () => {
    const args = { prompt: 'x', ...extra };
    if (path === null) parseRunInput(args, ctx);
    else
      assert.deepEqual(
        errorOf(() => parseRunInput(args, ctx)),
        { code: 'invalid_arguments', path },
      );
  });
}

test('session ids are normalized to lower case so one conversation has one lock key', () => {
  const upper = ID.toUpperCase();
  assert.deepEqual(parseRunInput({ prompt: 'x', resume_session_id: upper }, ctx).session, { kind: 'resume', sessionId: ID, fork: false });
  assert.deepEqual(parseRunInput({ prompt: 'x', session_id: upper }, ctx).session, { kind: 'new', sessionId: ID });
  assert.equal(parseRunInput({ prompt: 'x', resume_session_id: upper }, ctx).nativeOptions['resume_session_id'], ID);
});

test('session intents', () => {
  assert.deepEqual(parseRunInput({ prompt: 'x', session_id: ID }, ctx).session, { kind: 'new', sessionId: ID });
  assert.deepEqual(parseRunInput({ prompt: 'x', resume_session_id: ID, fork_session: true }, ctx).session, {
    kind: 'resume',
    sessionId: ID,
    fork: true,
  });
  assert.deepEqual(parseRunInput({ prompt: 'x', continue_previous: true }, ctx).session, { kind: 'continue', fork: false });
});

test('idle timeout may not exceed the wall timeout', () => {
  assert.deepEqual(
    errorOf(() => parseRunInput({ prompt: 'x', timeout_seconds: 10, idle_timeout_seconds: 11 }, ctx)),
    { code: 'invalid_arguments', path: '/idle_timeout_seconds' },
  );
  assert.equal(parseRunInput({ prompt: 'x', timeout_seconds: 10, idle_timeout_seconds: 10 }, ctx).idleTimeoutMs, 10_000);
});

test('carve-out deny under a broad allow fails closed, with an explanation', () => {
  const err = errorOf(() =>
    parseRunInput({ prompt: 'x', allowed_tools: ['Read', 'Bash(git:*)'], disallowed_tools: ['Bash(git commit:*)'] }, ctx),
  );
  assert.deepEqual(err, { code: 'permission_rule_fails_open', path: '/disallowed_tools/0' });
  assert.throws(
    () => checkPermissionRules(['Bash(git:*)'], ['Bash(git commit:*)']),
    (e: unknown) => {
      assert.ok(e instanceof Error);
      assert.match(e.message, /fails open/);
      assert.match(e.message, /before the subcommand/);
      return true;
    },
  );
});

test('the carve-out refusal names both rules by their JSON path, never by their text', () => {
  const error = (() => {
    try {
      checkPermissionRules(['Read', 'Zqxtool(git:*)'], ['Write', 'Zqxtool(git commit:*)']);
    } catch (e) {
      return e;
    }
    return assert.fail('not refused');
  })();
  assert.ok(isToolError(error));
  assert.deepEqual([error.code, error.path], ['permission_rule_fails_open', '/disallowed_tools/1']);
  assert.equal(error.message.includes('Zqxtool'), false, 'the submitted tool name is not echoed');
  assert.match(error.message, /\/disallowed_tools\/1 carves an exception out of a broader rule for the same tool at \/allowed_tools\/1/);
});

const rules: Array<[string[], string[], boolean]> = [
  [['Bash'], ['Bash(rm:*)'], true],
  [['Bash(git:*),Read'], ['Bash(git commit:*)'], true],
  [['Read Bash(git:*)'], ['Bash(git commit:*)'], true],
  [['Bash(git status:*)'], ['Write Bash(git status --porcelain:*)'], true],
  [['Bash(git log --oneline:*) Read'], ['Write'], false],
  [['Bash(git:*)'], ['Bash(git push:*)'], true],
  [['Bash(npm run:*)'], ['Bash(npm run deploy:*)'], true],
  [['Bash(git status:*)'], ['Bash(git commit:*)'], false],
  [['Bash(git:*)'], ['Bash(git:*)'], false],
  [['Read'], ['Bash(rm:*)'], false],
  [['Bash(git status)'], ['Bash(git status --x)'], false],
  [[], ['Bash'], false],
  [['Bash(git:*)'], ['Write'], false],
];
for (const [allow, deny, rejected] of rules) {
  test(`permission rules ${JSON.stringify(allow)} / ${JSON.stringify(deny)} -> ${rejected ? 'rejected' : 'accepted'}`, () => {
    if (rejected)
      assert.throws(
        () => checkPermissionRules(allow, deny),
        (e) => isToolError(e) && e.code === 'permission_rule_fails_open',
      );
    else checkPermissionRules(allow, deny);
  });
}

test('ask_host: opt-in; without a mode or with default it asks in the native default mode; dontAsk and plan never ask and are refused; default alone is refused', () => {
  assert.equal(parseRunInput({ prompt: 'x' }, ctx).askHost, null, 'nothing changes without the argument');
  assert.deepEqual(parseRunInput({ prompt: 'x', ask_host: true }, ctx).askHost, { timeoutMs: 180_000, defaultMode: true });
  assert.deepEqual(
    parseRunInput({ prompt: 'x', ask_host: true, permission_mode: 'acceptEdits', ask_host_timeout_seconds: 5 }, ctx).askHost,
    { timeoutMs: 5000, defaultMode: false },
  );
  for (const mode of ['dontAsk', 'plan']) {
    assert.deepEqual(
      errorOf(() => parseRunInput({ prompt: 'x', ask_host: true, permission_mode: mode }, ctx)),
      { code: 'invalid_arguments', path: '/permission_mode' },
    );
  }
  assert.deepEqual(
    errorOf(() => parseRunInput({ prompt: 'x', ask_host_timeout_seconds: 5 }, ctx)),
    { code: 'invalid_arguments', path: '/ask_host_timeout_seconds' },
  );
  // default is the mode ask_host asks in: with ask_host it is what leaving the mode out is; alone, nothing could answer.
  const named = parseRunInput({ prompt: 'x', ask_host: true, permission_mode: 'default' }, ctx);
  const omitted = parseRunInput({ prompt: 'x', ask_host: true }, ctx);
  assert.deepEqual(named, omitted);
  assert.deepEqual(
    errorOf(() => parseRunInput({ prompt: 'x', permission_mode: 'default' }, ctx)),
    { code: 'invalid_arguments', path: '/permission_mode' },
  );
  assert.throws(
    () => parseRunInput({ prompt: 'x', permission_mode: 'default' }, ctx),
    (e) => isToolError(e) && /add ask_host: true/.test(e.message) && /leave permission_mode out/.test(e.message),
  );
  assert.throws(
    () => parseRunInput({ prompt: 'x', ask_host: true, permission_mode: 'plan' }, ctx),
    (e) => isToolError(e) && /leave permission_mode out \(or pass default\)/.test(e.message),
  );
  assert.deepEqual(
    errorOf(() => parseRunInput({ prompt: 'x', ask_host: true, ask_host_timeout_seconds: 60, idle_timeout_seconds: 60 }, ctx)),
    { code: 'invalid_arguments', path: '/idle_timeout_seconds' },
    'the idle timer must outlast a question',
  );
  assert.deepEqual(parseRunInput({ prompt: 'x', ask_host: true, ask_host_timeout_seconds: 60, idle_timeout_seconds: 61 }, ctx).askHost, {
    timeoutMs: 60_000,
    defaultMode: true,
  });
});
