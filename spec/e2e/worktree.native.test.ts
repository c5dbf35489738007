// Worktrees for real, one run at a time: refusals before any spawn, a resumed conversation that runs again in
// its worktree, the removal tool's refusals and removal, and the capabilities resource.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inCwd, marker, startAdapterTier } from './adapter-tier.ts';
import type { AdapterTier } from './adapter-tier.ts';
import { promptTag } from '../../fixtures/fake-anthropic/server.ts';
import { obj, toolBody } from '../helpers/typed-results.ts';
import { toolErrorOf } from '../helpers/tool-harness.ts';
import { contentOf, git, IDENTITY, makeRepository, SCENARIOS } from './worktree-fixtures.ts';
import { execFileSync } from 'node:child_process';

type Json = Record<string, unknown>;

describe('adapter over the real binary: worktrees', () => {
  let tier: AdapterTier;
  before(async () => {
    tier = await startAdapterTier({ scenarios: SCENARIOS });
  });
  after(async () => {
    await tier.close();
  });

  it('refused before any spawn: cwd outside a repository, a taken name, a name that is a path, resume without fork', async () => {
    await inCwd(tier, async (cwd) => {
      const refuse = async (args: Json, path: string, message: RegExp): Promise<void> => {
        const prompt = `refused ${marker('r')}`;
        const out = await tier.client.callTool({ name: 'claude.run', arguments: { prompt, cwd, ...args } });
        assert.equal(out.isError, true);
        assert.equal(out.structuredContent, undefined, 'no run was reserved');
        const refusal = toolErrorOf(toolBody(out)['error']);
        assert.deepEqual([refusal?.code, refusal?.path], ['invalid_arguments', path]);
        assert.match(refusal?.message ?? '', message);
        assert.equal(tier.callsWith(prompt).length, 0, 'nothing reached the model: nothing was spawned');
      };
      await refuse({ worktree: 'w1' }, '/worktree', /inside a git repository/);
      makeRepository(cwd);
      git(cwd, 'branch', 'worktree-taken');
      await refuse({ worktree: 'taken' }, '/worktree', /the worktree's branch \(worktree-<name>\) exists already/);
      await refuse({ worktree: '../escape' }, '/worktree', /pattern/);
      await refuse({ worktree: 'x', resume_session_id: '00000000-0000-4000-8000-000000000000' }, '/worktree', /fork_session/);
      assert.equal(existsSync(join(cwd, '.claude')), false, 'no worktree folder was made');
    });
  });

  it('a resumed conversation runs again in its worktree, and its commit is counted as committed; a fork goes to a new worktree', async () => {
    await inCwd(tier, async (cwd) => {
      const base = makeRepository(cwd);
      const first = await tier.call('claude.run', { prompt: `start ${marker('r1')}`, cwd, worktree: 'again' });
      assert.equal(first.isError, false, JSON.stringify(first.error));
      const path = join(cwd, '.claude', 'worktrees', 'again');
      assert.equal(obj(first.result['worktree'])['path'], path);
      const sessionId = first.result['session_id'];
      const resumed = await tier.call('claude.run', {
        prompt: `commit ${marker('r2')} ${promptTag('commit_note')}`,
        cwd,
        resume_session_id: sessionId,
        allowed_tools: ['Bash'],
      });
      assert.equal(resumed.isError, false, JSON.stringify(resumed.error));
      assert.equal(resumed.result['resumed'], true);
      const worktree = obj(resumed.result['worktree']);
      assert.equal(worktree['path'], path, 'the native resumed it in its worktree, and the result says so');
      assert.equal(worktree['base_commit'], base);
      assert.deepEqual(worktree['committed'], { files: 1, added: 1, modified: 0, deleted: 0, lines_added: 2, lines_deleted: 0 });
      assert.deepEqual(worktree['uncommitted'], { files: 0, added: 0, modified: 0, deleted: 0, lines_added: 0, lines_deleted: 0 });
      assert.equal(existsSync(join(cwd, 'note.txt')), false, 'the commit stayed in the worktree');

      // A fork into a new worktree: the forked conversation runs there, on a branch from the main HEAD.
      const forked = await tier.call('claude.run', {
        prompt: `fork ${marker('r3')}`,
        cwd,
        resume_session_id: sessionId,
        fork_session: true,
        worktree: 'forked',
      });
      assert.equal(forked.isError, false, JSON.stringify(forked.error));
      assert.notEqual(forked.result['session_id'], sessionId);
      const fork = obj(forked.result['worktree']);
      assert.deepEqual(
        [fork['path'], fork['branch'], fork['base_commit']],
        [join(cwd, '.claude', 'worktrees', 'forked'), 'worktree-forked', base],
      );
      assert.equal(
        existsSync(join(String(fork['path']), 'note.txt')),
        false,
        'the new worktree starts from HEAD, not from the other worktree',
      );
      for (const out of [first, resumed, forked]) await tier.call('claude.run.release', { run_id: out.result['run_id'] });
    });
  });

  it('claude.worktree.remove refuses to lose work unless forced, removes a clean one, and reports what it removed', async () => {
    await inCwd(tier, async (cwd) => {
      makeRepository(cwd);
      const remove = async (args: Json): Promise<{ isError: boolean; body: Json }> => {
        const out = await tier.client.callTool({ name: 'claude.worktree.remove', arguments: { cwd, ...args } });
        return { isError: out.isError === true, body: toolBody(out) };
      };
      const refusedWith = async (args: Json, code: string, message: RegExp): Promise<void> => {
        const out = await remove(args);
        assert.equal(out.isError, true);
        const refusal = toolErrorOf(out.body['error']);
        assert.equal(refusal?.code, code);
        assert.match(refusal?.message ?? '', message);
      };
      const dirty = await tier.call('claude.run', {
        prompt: `dirty ${marker('d')} ${promptTag('write_w1')}`,
        cwd,
        worktree: 'dirty',
        allowed_tools: ['Bash'],
      });
      const clean = await tier.call('claude.run', { prompt: `clean ${marker('c')}`, cwd, worktree: 'clean' });
      for (const out of [dirty, clean]) assert.equal(out.isError, false, JSON.stringify(out.error));
      const dirtyPath = join(cwd, '.claude', 'worktrees', 'dirty');

      await refusedWith({ name: 'dirty' }, 'worktree_has_work', /1 uncommitted file\(s\) \(shared\.txt\)/);
      assert.equal(readFileSync(join(dirtyPath, 'shared.txt'), 'utf8'), contentOf('w1'), 'nothing was removed');
      git(dirtyPath, 'add', 'shared.txt');
      git(dirtyPath, ...IDENTITY, 'commit', '-q', '-m', 'work');
      const head = git(dirtyPath, 'rev-parse', 'HEAD').trim();
      await refusedWith({ name: 'dirty' }, 'worktree_has_work', /1 commit\(s\) no other branch or tag reaches/);
      const forced = await remove({ name: 'dirty', force: true });
      assert.equal(forced.isError, false, JSON.stringify(forced.body));
      const removedDirty = obj(obj(forced.body['result'])['removed']);
      // The native leaves its session lock (`claude session live (pid N)`); its process is gone, so it is lifted.
      assert.ok(Number.isSafeInteger(removedDirty['stale_lock_pid']), JSON.stringify(removedDirty));
      assert.deepEqual(removedDirty, {
        ...removedDirty,
        name: 'dirty',
        path: dirtyPath,
        branch: 'worktree-dirty',
        head_commit: head,
        forced: true,
        discarded: { uncommitted_files: 0, unreachable_commits: 1, populated_submodules: 0 },
      });
      assert.equal(existsSync(dirtyPath), false);

      const removed = await remove({ name: 'clean' });
      assert.equal(removed.isError, false, JSON.stringify(removed.body));
      assert.deepEqual(obj(obj(removed.body['result'])['removed'])['discarded'], {
        uncommitted_files: 0,
        unreachable_commits: 0,
        populated_submodules: 0,
      });
      assert.deepEqual(git(cwd, 'branch', '--format=%(refname:short)').trim().split('\n'), ['main'], 'both branches deleted');
      assert.equal(
        git(cwd, 'worktree', 'list', '--porcelain')
          .split('\n')
          .filter((l) => l.startsWith('worktree ')).length,
        1,
      );
      await refusedWith({ name: 'clean' }, 'worktree_not_found', /no worktree by that name in this repository/);
      for (const out of [dirty, clean]) await tier.call('claude.run.release', { run_id: out.result['run_id'] });
    });
  });

  it('the capabilities resource says worktree isolation is available, with the git version', async () => {
    const read = await tier.client.readResource({ uri: 'claude-run://capabilities' });
    const [content] = read.contents;
    const text = content !== undefined && 'text' in content ? String(content.text) : '{}';
    const worktree = obj(obj(JSON.parse(text) as unknown)['worktree']);
    assert.equal(worktree['available'], true);
    assert.equal(worktree['git_version'], /git version (\S+)/.exec(execFileSync('git', ['--version'], { encoding: 'utf8' }))?.[1]);
  });
});
