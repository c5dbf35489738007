// Worktrees for real, in parallel: four runs at once on one repository, each told by the fake model to write
// its own content into the same file, each in its own git worktree made by the pinned claude (-p --worktree);
// then the same four without worktree, to show the collision the option prevents.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inCwd, marker, pollTool, startAdapterTier } from './adapter-tier.ts';
import type { AdapterTier, CallOutcome } from './adapter-tier.ts';
import { promptTag } from '../../fixtures/fake-anthropic/server.ts';
import { obj } from '../helpers/typed-results.ts';
import { contentOf, git, makeRepository, NAMES, SCENARIOS } from './worktree-fixtures.ts';

describe('adapter over the real binary: worktrees in parallel', () => {
  let tier: AdapterTier;
  before(async () => {
    tier = await startAdapterTier({ scenarios: SCENARIOS });
  });
  after(async () => {
    await tier.close();
  });

  const startAll = async (cwd: string, withWorktree: boolean, label: string): Promise<string[]> => {
    const started = await Promise.all(
      NAMES.map((name) =>
        tier.call('claude.run.start', {
          prompt: `${label} ${marker(name)} ${promptTag(`write_${name}`)}`,
          cwd,
          allowed_tools: ['Bash'],
          ...(withWorktree ? { worktree: name } : {}),
        }),
      ),
    );
    for (const out of started) assert.equal(out.isError, false, JSON.stringify(out.error));
    return started.map((out) => String(out.result['run_id']));
  };
  const settled = (runId: string): Promise<CallOutcome> =>
    pollTool(
      `${runId} settles`,
      async () => {
        const out = await tier.call('claude.run.result', { run_id: runId, wait_seconds: 5 });
        return out.result['completed'] === true ? out : undefined;
      },
      120_000,
    );

  it('four runs at once, each in its own worktree: four branches, four contents, the main checkout unchanged', async () => {
    await inCwd(tier, async (cwd) => {
      const base = makeRepository(cwd);
      const runIds = await startAll(cwd, true, 'isolated');
      const results = await Promise.all(runIds.map(settled));
      for (const [i, out] of results.entries()) {
        const name = NAMES[i] ?? '';
        assert.equal(out.isError, false, JSON.stringify(out.result));
        assert.equal(out.result['cleanup_confirmed'], true);
        const summary = obj(out.result['worktree']);
        const path = join(cwd, '.claude', 'worktrees', name);
        assert.deepEqual(
          summary,
          {
            name,
            path,
            branch: `worktree-${name}`,
            base_commit: base,
            committed: { files: 0, added: 0, modified: 0, deleted: 0, lines_added: 0, lines_deleted: 0 },
            uncommitted: { files: 1, added: 0, modified: 1, deleted: 0, lines_added: 1, lines_deleted: 1 },
            files_truncated: false,
            changes_error: null,
          },
          `the summary names where the work is and counts it: ${JSON.stringify(out.result)}`,
        );
        const full = obj((await tier.full(runIds[i]))['worktree']);
        assert.deepEqual(full['files'], [{ path: 'shared.txt', status: 'modified', committed: false, lines_added: 1, lines_deleted: 1 }]);
        assert.equal(full['head_commit'], base);
        assert.equal(readFileSync(join(path, 'shared.txt'), 'utf8'), contentOf(name), `${name} kept its own content`);
        assert.equal(git(path, 'rev-parse', '--abbrev-ref', 'HEAD').trim(), `worktree-${name}`);
      }
      assert.equal(readFileSync(join(cwd, 'shared.txt'), 'utf8'), 'original\n', 'the main checkout is unchanged');
      assert.equal(git(cwd, 'status', '--porcelain', '--untracked-files=no'), '', 'no tracked change in the main checkout');
      const branches = git(cwd, 'branch', '--format=%(refname:short)').trim().split('\n').sort();
      assert.deepEqual(branches, ['main', ...NAMES.map((n) => `worktree-${n}`)]);
      assert.equal(
        git(cwd, 'worktree', 'list', '--porcelain')
          .split('\n')
          .filter((l) => l.startsWith('worktree ')).length,
        5,
      );
      for (const runId of runIds) await tier.call('claude.run.release', { run_id: runId });
    });
  });

  it('control: the same four without worktree write into one checkout, and only one content survives', async (t) => {
    await inCwd(tier, async (cwd) => {
      makeRepository(cwd);
      const runIds = await startAll(cwd, false, 'shared');
      const results = await Promise.all(runIds.map(settled));
      for (const out of results) {
        assert.equal(out.isError, false, JSON.stringify(out.error));
        assert.equal(Object.hasOwn(out.result, 'worktree'), false, 'no worktree, none reported');
      }
      const left = readFileSync(join(cwd, 'shared.txt'), 'utf8');
      const winner = NAMES.find((name) => contentOf(name) === left);
      assert.ok(winner !== undefined, "the file holds one run's content");
      t.diagnostic(`without worktree the four runs overwrote one file; ${winner} wrote last, three writes are lost`);
      for (const runId of runIds) await tier.call('claude.run.release', { run_id: runId });
    });
  });
});
