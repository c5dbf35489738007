// Worktrees for real: four runs at once on one repository, each told by the fake model to write its own
// content into the same file, each in its own git worktree made by the pinned claude (-p --worktree); the
// same four without worktree, to show the collision the option prevents; refusals before any spawn; a
// resumed conversation that runs again in its worktree; and the removal tool's refusals and removal.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inCwd, marker, pollTool, startAdapterTier } from './adapter-tier.ts';
import type { AdapterTier, CallOutcome } from './adapter-tier.ts';
import { promptTag } from '../../fixtures/fake-anthropic/server.ts';
import type { Scenario } from '../../fixtures/fake-anthropic/server.ts';
import { obj, toolBody } from '../helpers/typed-results.ts';
import { toolErrorOf } from '../helpers/tool-harness.ts';

type Json = Record<string, unknown>;
const NAMES = ['w1', 'w2', 'w3', 'w4'] as const;
const contentOf = (name: string): string => `content of ${name}\n`;
const IDENTITY = ['-c', 'user.name=Fake', '-c', 'user.email=fake@example.invalid'];

const writeScenario = (name: string): Scenario => ({
  kind: 'tool_use', tool: 'Bash', preambleText: '',
  input: { command: `printf '${contentOf(name).trimEnd()}\\n' > shared.txt`, description: 'Write the shared file' },
  followUpText: `wrote ${name}`,
});
const SCENARIOS: Record<string, Scenario> = {
  ...Object.fromEntries(NAMES.map((name) => [`write_${name}`, writeScenario(name)])),
  commit_note: {
    kind: 'tool_use', tool: 'Bash', preambleText: '',
    input: { command: `printf 'a\\nb\\n' > note.txt && git add note.txt && git ${IDENTITY.join(' ')} commit -q -m note`, description: 'Commit a note' },
    followUpText: 'committed',
  },
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', timeout: 10_000, env: { PATH: '/usr/bin:/bin', HOME: cwd, LC_ALL: 'C' } });
}

/** A repository with one commit: shared.txt holds "original". Returns the commit. */
function makeRepository(cwd: string): string {
  git(cwd, 'init', '-q', '-b', 'main');
  writeFileSync(join(cwd, 'shared.txt'), 'original\n');
  git(cwd, 'add', 'shared.txt');
  git(cwd, ...IDENTITY, 'commit', '-q', '-m', 'initial');
  return git(cwd, 'rev-parse', 'HEAD').trim();
}

describe('adapter over the real binary: worktrees', () => {
  let tier: AdapterTier;
  before(async () => { tier = await startAdapterTier({ scenarios: SCENARIOS }); });
  after(async () => { await tier.close(); });

  const startAll = async (cwd: string, withWorktree: boolean, label: string): Promise<string[]> => {
    const started = await Promise.all(NAMES.map((name) => tier.call('claude.run.start', {
      prompt: `${label} ${marker(name)} ${promptTag(`write_${name}`)}`, cwd, allowed_tools: ['Bash'],
      ...(withWorktree ? { worktree: name } : {}),
    })));
    for (const out of started) assert.equal(out.isError, false, JSON.stringify(out.error));
    return started.map((out) => String(out.result['run_id']));
  };
  const settled = (runId: string): Promise<CallOutcome> => pollTool(`${runId} settles`, async () => {
    const out = await tier.call('claude.run.result', { run_id: runId, wait_seconds: 5 });
    return out.result['completed'] === true ? out : undefined;
  }, 120_000);

  it('four runs at once, each in its own worktree: four branches, four contents, the main checkout unchanged', async () => {
    await inCwd(tier, async (cwd) => {
      const base = makeRepository(cwd);
      const runIds = await startAll(cwd, true, 'isolated');
      const results = await Promise.all(runIds.map(settled));
      for (const [i, out] of results.entries()) {
        const name = NAMES[i] ?? '';
        assert.equal(out.isError, false, JSON.stringify(out.error));
        assert.equal(out.result['cleanup_confirmed'], true);
        const summary = obj(out.result['worktree']);
        const path = join(cwd, '.claude', 'worktrees', name);
        assert.deepEqual(summary, {
          name, path, branch: `worktree-${name}`, base_commit: base,
          committed: { files: 0, added: 0, modified: 0, deleted: 0, lines_added: 0, lines_deleted: 0 },
          uncommitted: { files: 1, added: 0, modified: 1, deleted: 0, lines_added: 1, lines_deleted: 1 },
          files_truncated: false, changes_error: null,
        }, 'the summary names where the work is and counts it');
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
      assert.equal(git(cwd, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 5);
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
      assert.ok(winner !== undefined, 'the file holds one run\'s content');
      t.diagnostic(`without worktree the four runs overwrote one file; ${winner} wrote last, three writes are lost`);
      for (const runId of runIds) await tier.call('claude.run.release', { run_id: runId });
    });
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
      await refuse({ worktree: 'taken' }, '/worktree', /branch worktree-taken exists/);
      await refuse({ worktree: '../escape' }, '/worktree', /pattern/);
      await refuse({ worktree: 'x', resume_session_id: '00000000-0000-4000-8000-000000000000' }, '/worktree', /fork_session/);
      assert.equal(existsSync(join(cwd, '.claude')), false, 'no worktree folder was made');
    });
  });

  it('a resumed conversation runs again in its worktree, and its commit is counted as committed', async () => {
    await inCwd(tier, async (cwd) => {
      const base = makeRepository(cwd);
      const first = await tier.call('claude.run', { prompt: `start ${marker('r1')}`, cwd, worktree: 'again' });
      assert.equal(first.isError, false, JSON.stringify(first.error));
      const path = join(cwd, '.claude', 'worktrees', 'again');
      assert.equal(obj(first.result['worktree'])['path'], path);
      const sessionId = first.result['session_id'];
      const resumed = await tier.call('claude.run', {
        prompt: `commit ${marker('r2')} ${promptTag('commit_note')}`, cwd, resume_session_id: sessionId, allowed_tools: ['Bash'],
      });
      assert.equal(resumed.isError, false, JSON.stringify(resumed.error));
      assert.equal(resumed.result['resumed'], true);
      const worktree = obj(resumed.result['worktree']);
      assert.equal(worktree['path'], path, 'the native resumed it in its worktree, and the result says so');
      assert.equal(worktree['base_commit'], base);
      assert.deepEqual(worktree['committed'], { files: 1, added: 1, modified: 0, deleted: 0, lines_added: 2, lines_deleted: 0 });
      assert.deepEqual(worktree['uncommitted'], { files: 0, added: 0, modified: 0, deleted: 0, lines_added: 0, lines_deleted: 0 });
      assert.equal(existsSync(join(cwd, 'note.txt')), false, 'the commit stayed in the worktree');
      for (const out of [first, resumed]) await tier.call('claude.run.release', { run_id: out.result['run_id'] });
    });
  });
});
