// Worktree removal against a real git repository and the real process table: a child process (`sleep`) with its
// cwd inside the worktree, a git lock naming a live pid, a merge under way, a commit only a detached HEAD
// reaches and a staged rename. Every child is this file's own, ended and reaped before the file ends.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGitRunner } from '../../lib/worktree/git.ts';
import { removeWorktree, type RemoveDeps, type RemovedWorktree } from '../../lib/worktree/remove.ts';
import { pidPresence, processesWithCwd } from '../../lib/process/occupants.ts';
import { isToolError } from '../../lib/tool-errors.ts';

const ENV = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const IDENTITY = ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', '-c', 'commit.gpgsign=false'];
const git = (cwd: string, ...args: string[]): string => execFileSync('git', [...IDENTITY, ...args], { cwd, env: ENV, encoding: 'utf8' });

const deps: RemoveDeps = {
  git: createGitRunner({ env: ENV }),
  processes: { withCwd: processesWithCwd, pidPresence },
  exists: existsSync,
};

let root = '';
let repo = '';
const children = new Set<ChildProcess>();

/** A `sleep` of this file's own with its cwd in `cwd`: ready once spawned (the cwd is set before exec). */
async function sleeper(cwd: string): Promise<ChildProcess & { pid: number }> {
  const child = spawn('sleep', ['300'], { cwd, stdio: 'ignore' });
  children.add(child);
  await once(child, 'spawn');
  assert.ok(child.pid !== undefined);
  return child as ChildProcess & { pid: number };
}

async function end(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }
  children.delete(child);
}

function addWorktree(name: string): string {
  const path = join(repo, '.claude', 'worktrees', name);
  git(repo, 'worktree', 'add', '-q', '-b', `worktree-${name}`, path, 'HEAD');
  return path;
}

async function attempt(name: string, force: boolean): Promise<RemovedWorktree | { code: string; message: string }> {
  try {
    return await removeWorktree(deps, { cwd: repo, name, force, inUse: () => false });
  } catch (error) {
    if (isToolError(error)) return { code: error.code, message: error.message };
    throw error;
  }
}

const codeOf = (out: RemovedWorktree | { code: string }): string => ('code' in out ? out.code : 'removed');

before(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'wt-remove-')));
  repo = join(root, 'repo');
  mkdirSync(repo);
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'a.txt'), 'a\n');
  git(repo, 'add', 'a.txt');
  git(repo, 'commit', '-q', '-m', 'first');
});

after(async () => {
  for (const child of [...children]) await end(child);
  rmSync(root, { recursive: true, force: true });
});

describe('claude.worktree.remove on the real process table', () => {
  it('a live process in it, then a git lock naming a live pid: refused even forced; the lock of a gone pid is lifted', async () => {
    const path = addWorktree('live');
    mkdirSync(join(path, 'sub'));
    const inside = await sleeper(join(path, 'sub'));
    git(repo, 'worktree', 'lock', '--reason', `claude session live (pid ${inside.pid})`, path);
    const occupied = await attempt('live', true);
    assert.equal(codeOf(occupied), 'worktree_occupied');
    assert.match('message' in occupied ? occupied.message : '', new RegExp(`pid ${inside.pid}\\b`));
    assert.ok(existsSync(join(path, 'sub')), 'nothing was removed');

    await end(inside);
    const elsewhere = await sleeper(root);
    git(repo, 'worktree', 'unlock', path);
    git(repo, 'worktree', 'lock', '--reason', `claude session live (pid ${elsewhere.pid} start 1)`, path);
    assert.equal(codeOf(await attempt('live', true)), 'worktree_lock_live');
    assert.match(git(repo, 'worktree', 'list', '--porcelain'), new RegExp(`locked claude session live \\(pid ${elsewhere.pid} start 1\\)`));

    await end(elsewhere);
    assert.equal(pidPresence(elsewhere.pid), 'gone');
    const removed = await attempt('live', false);
    assert.equal(codeOf(removed), 'removed', JSON.stringify(removed));
    assert.equal('stale_lock_pid' in removed ? removed.stale_lock_pid : null, elsewhere.pid);
    assert.equal(existsSync(path), false);
  });

  it('a lock someone took by hand is theirs: refused even forced, and left in place', async () => {
    const path = addWorktree('mine');
    git(repo, 'worktree', 'lock', '--reason', 'keeping this one', path);
    assert.equal(codeOf(await attempt('mine', true)), 'worktree_lock_unverifiable');
    assert.match(git(repo, 'worktree', 'list', '--porcelain'), /locked keeping this one/);
    git(repo, 'worktree', 'unlock', path);
    assert.equal(codeOf(await attempt('mine', false)), 'removed');
  });

  it('a merge under way: refused even forced', async () => {
    const path = addWorktree('merging');
    writeFileSync(join(path, 'a.txt'), 'theirs\n');
    git(path, 'commit', '-q', '-am', 'theirs');
    git(repo, 'branch', '-q', 'side', 'main');
    git(repo, 'worktree', 'add', '-q', join(root, 'side'), 'side');
    writeFileSync(join(root, 'side', 'a.txt'), 'ours\n');
    git(join(root, 'side'), 'commit', '-q', '-am', 'ours');
    assert.throws(() => git(path, 'merge', '-q', 'side'), 'the merge stops on its conflict');
    const refused = await attempt('merging', true);
    assert.equal(codeOf(refused), 'worktree_operation_in_progress');
    assert.match('message' in refused ? refused.message : '', /a merge is under way/);
    git(path, 'merge', '--abort');
    assert.equal(codeOf(await attempt('merging', true)), 'removed');
  });

  it('a commit only its detached HEAD reaches is work; a staged rename is its two paths, its origin not read as a file', async () => {
    const path = addWorktree('detached');
    git(path, 'checkout', '-q', '--detach');
    writeFileSync(join(path, 'b.txt'), 'b\n');
    git(path, 'add', 'b.txt');
    git(path, 'commit', '-q', '-m', 'only on the detached HEAD');
    const refused = await attempt('detached', false);
    assert.equal(codeOf(refused), 'worktree_has_work');
    assert.match('message' in refused ? refused.message : '', /1 commit\(s\) no other branch or tag reaches/);
    renameSync(join(path, 'a.txt'), join(path, 'renamed.txt'));
    git(path, 'add', '-A');
    assert.match(git(path, 'status', '--porcelain'), /^R {2}a\.txt -> renamed\.txt$/m, 'git itself sees one rename');
    // Read without renames: the old path gone and the new one added, and no third, mangled name.
    const named = await attempt('detached', false);
    assert.match('message' in named ? named.message : '', /holds 2 uncommitted file\(s\) \(a\.txt, renamed\.txt\) and/);
    const forced = await attempt('detached', true);
    assert.deepEqual('discarded' in forced ? forced.discarded : forced, {
      uncommitted_files: 2,
      unreachable_commits: 1,
      populated_submodules: 0,
    });
  });
});
