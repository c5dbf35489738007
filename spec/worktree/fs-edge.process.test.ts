// The settle inspection over a real worktree whose untracked entries are a FIFO, symlinks to it, and a symlink
// to a file outside the worktree: it answers at once, counting only the regular file, and names the others'
// lines null. (Opened the ordinary way, a FIFO blocks a thread of the pool until a writer comes: five of them
// held all four and the run never settled.)
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGitRunner } from '../../lib/worktree/git.ts';
import { inspectWorktree, type WorktreeReport } from '../../lib/worktree/changes.ts';
import { countFileLines } from '../../lib/worktree/fs-edge.ts';
import { worktreePlace } from '../../lib/worktree/worktree.ts';
import { systemClock } from '../../lib/util/clock.ts';

const dir = mkdtempSync(join(tmpdir(), 'fs-edge-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** How long the spec waits before it calls the inspection hung (it answers in milliseconds). */
const HANG_DEADLINE_MS = 20_000;

const git = (cwd: string, ...args: string[]): void => {
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    cwd,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  });
};

describe('untracked entries that are not regular files', () => {
  it('a FIFO and symlinks (to it, or out of the worktree) count null lines; the inspection does not wait on them', async () => {
    const repo = join(dir, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q');
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    git(repo, 'add', 'a.txt');
    git(repo, 'commit', '-qm', 'base');
    git(repo, 'worktree', 'add', '-q', '-b', 'worktree-w1', '.claude/worktrees/w1');
    const path = join(repo, '.claude/worktrees/w1');
    execFileSync('mkfifo', [join(path, 'fifo')]);
    for (let i = 0; i < 5; i += 1) symlinkSync('fifo', join(path, `to-fifo-${i}`));
    writeFileSync(join(dir, 'outside.txt'), '1\n2\n3\n');
    symlinkSync(join(dir, 'outside.txt'), join(path, 'to-outside'));
    writeFileSync(join(path, 'plain.txt'), 'x\ny\n');

    const inspection = inspectWorktree(
      { git: createGitRunner({ env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } }), countLines: countFileLines, clock: systemClock },
      worktreePlace(repo, 'w1'),
    );
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<'hung'>((resolve) => {
      timer = setTimeout(() => resolve('hung'), HANG_DEADLINE_MS);
    });
    const first = await Promise.race([inspection, hung]);
    clearTimeout(timer);
    if (first === 'hung') {
      // Let the blocked opens go (a writer arriving releases them) so this process can end, then fail.
      const writer = openSync(join(path, 'fifo'), constants.O_WRONLY | constants.O_NONBLOCK);
      await inspection;
      closeSync(writer);
      assert.fail(`the inspection did not answer within ${HANG_DEADLINE_MS} ms`);
    }
    const report: WorktreeReport = first;
    assert.equal(report.changes_error, null);
    const lines = Object.fromEntries(report.files.map((f) => [f.path, f.lines_added]));
    // git lists no FIFO itself (only files and symlinks), so the symlinks are the way in.
    assert.deepEqual(lines, {
      'plain.txt': 2,
      'to-fifo-0': null,
      'to-fifo-1': null,
      'to-fifo-2': null,
      'to-fifo-3': null,
      'to-fifo-4': null,
      'to-outside': null,
    });
    assert.equal(report.uncommitted?.lines_added, 2, 'the file outside the worktree is not counted');
    assert.equal(await countFileLines(join(path, 'fifo')), null, 'the FIFO itself, opened directly');
  });

  it('a regular file is still counted, and a directory or a missing path is null', async () => {
    writeFileSync(join(dir, 'three.txt'), 'a\nb\nc');
    assert.equal(await countFileLines(join(dir, 'three.txt')), 3);
    assert.equal(await countFileLines(dir), null);
    assert.equal(await countFileLines(join(dir, 'missing')), null);
  });
});
