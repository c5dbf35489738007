// What git is started with (pure): no host-session variable, no GIT_* that redirects git, fsmonitor and
// signature checks off, and the configured filter drivers turned off by name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { filterNeutralizing, FILTER_LIST_ARGS, gitEnv, needsFilterList, parseFilterNames } from '../../lib/worktree/git-env.ts';
import { HOST_SESSION_ENV } from '../../lib/native/native-env.ts';

/** The GIT_CONFIG_COUNT entries of an environment, as [key, value] pairs. */
function configOf(env: Record<string, string>): Array<[string, string]> {
  return Array.from({ length: Number(env['GIT_CONFIG_COUNT']) }, (_, i) => [
    env[`GIT_CONFIG_KEY_${i}`] ?? '?',
    env[`GIT_CONFIG_VALUE_${i}`] ?? '?',
  ]);
}

describe('git environment', () => {
  it("keeps the user's variables; drops the host session's, the reserved prefix and git's redirections", () => {
    const host = Object.fromEntries(HOST_SESSION_ENV.map((name) => [name, 'host']));
    const env = gitEnv(
      {
        ...host,
        PATH: '/bin',
        HOME: '/home/u',
        ANTHROPIC_API_KEY: 'user-owned',
        COMPUTER_MCP_TOKEN: 'secret',
        GIT_DIR: '/elsewhere/.git',
        GIT_WORK_TREE: '/elsewhere',
        GIT_INDEX_FILE: '/elsewhere/index',
        GIT_COMMON_DIR: '/elsewhere/.git',
        GIT_OBJECT_DIRECTORY: '/elsewhere/objects',
        GIT_CONFIG_PARAMETERS: "'core.fsmonitor=/evil'",
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'core.fsmonitor',
        GIT_CONFIG_VALUE_0: '/evil',
        GIT_EXTERNAL_DIFF: '/evil',
        GIT_EXEC_PATH: '/usr/lib/git-core',
        GIT_CONFIG_GLOBAL: '/home/u/.gitconfig',
        GONE: undefined,
      },
      [],
    );
    for (const name of HOST_SESSION_ENV) assert.ok(!(name in env), name);
    assert.equal(env['COMPUTER_MCP_TOKEN'], undefined);
    assert.deepEqual(
      Object.keys(env)
        .filter((k) => k.startsWith('GIT_') && !k.startsWith('GIT_CONFIG_KEY_') && !k.startsWith('GIT_CONFIG_VALUE_'))
        .sort(),
      ['GIT_CONFIG_COUNT', 'GIT_CONFIG_GLOBAL', 'GIT_EXEC_PATH', 'GIT_OPTIONAL_LOCKS', 'GIT_PAGER', 'GIT_TERMINAL_PROMPT'],
    );
    assert.deepEqual([env['PATH'], env['HOME'], env['ANTHROPIC_API_KEY'], env['LC_ALL']], ['/bin', '/home/u', 'user-owned', 'C']);
    assert.ok(!('GONE' in env));
    assert.deepEqual(configOf(env), [
      ['core.fsmonitor', 'false'],
      ['log.showSignature', 'false'],
    ]);
  });

  it('a call that may read content gets every listed driver off, names with dots or = whole', () => {
    const names = parseFilterNames('filter.lfs.clean\0filter.lfs.required\0filter.a.b=c.process\0filter.noname\0other.x.clean\0');
    assert.deepEqual(names, ['lfs', 'a.b=c']);
    assert.deepEqual(configOf(gitEnv({}, filterNeutralizing(names))).slice(2), [
      ['filter.lfs.clean', ''],
      ['filter.lfs.smudge', ''],
      ['filter.lfs.process', ''],
      ['filter.lfs.required', 'false'],
      ['filter.a.b=c.clean', ''],
      ['filter.a.b=c.smudge', ''],
      ['filter.a.b=c.process', ''],
      ['filter.a.b=c.required', 'false'],
    ]);
  });

  it('only calls known to read no content skip the listing', () => {
    for (const sub of ['diff', 'status', 'worktree', 'add', 'stash', 'checkout']) assert.equal(needsFilterList([sub]), true, sub);
    for (const sub of ['--version', 'config', 'rev-parse', 'reflog', 'rev-list', 'ls-files', 'branch'])
      assert.equal(needsFilterList([sub]), false, sub);
    assert.equal(needsFilterList(FILTER_LIST_ARGS), false, 'the listing itself');
  });
});
