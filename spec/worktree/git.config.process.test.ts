// Git as the server starts it runs nothing a repository configures, on real git and the real process table:
// a run that writes a clean filter (`setsid sleep` + an `env` dump), an fsmonitor hook and a signature
// program into its repository's config gets none of them run by the inspection made when it settles or by
// worktree removal, and git sees none of the host session's variables. A call in flight when the server
// leaves is ended with its whole process group.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGitRunner } from '../../lib/worktree/git.ts';
import { inspectWorktree } from '../../lib/worktree/changes.ts';
import { removeWorktree } from '../../lib/worktree/remove.ts';
import { countFileLines } from '../../lib/worktree/fs-edge.ts';
import { worktreePlace } from '../../lib/worktree/worktree.ts';
import { systemClock } from '../../lib/util/clock.ts';
import { readProcTable } from '../../lib/process/proc-table.ts';
import { pidPresence, processesWithCwd } from '../../lib/process/occupants.ts';

const dir = mkdtempSync(join(tmpdir(), 'git-config-'));
/** Seconds of the sleeps the attacks start: a number no other process on the machine uses as its argv. */
const UNIQUE = String(400_000 + Math.floor(Math.random() * 500_000));

function argvOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').slice(0, -1);
  } catch {
    return [];
  }
}
/** Live processes running exactly `sleep UNIQUE`: provably this spec's. */
const sleepers = (): number[] =>
  readProcTable()
    .filter((p) => p.state !== 'Z' && argvOf(p.pid).join(' ') === `sleep ${UNIQUE}`)
    .map((p) => p.pid);

/** Sleepers still there after a kill's delivery had time (bounded: a real survivor fails the spec). */
async function sleepersAfterKill(): Promise<number[]> {
  const started = Date.now();
  while (sleepers().length > 0 && Date.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, 20));
  return sleepers();
}

after(() => {
  // When the spec fails (on code that runs the filter), what it provoked is still its own to end.
  for (const pid of sleepers()) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  });

function script(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A repository with worktree w1 whose config a run has turned against whoever reads it. */
function hostileWorktree(): { repo: string; path: string } {
  const repo = join(dir, 'repo');
  execFileSync('mkdir', ['-p', repo]);
  git(repo, 'init', '-q');
  writeFileSync(join(repo, 'tracked.txt'), 'one\n');
  git(repo, 'add', 'tracked.txt');
  git(repo, 'commit', '-qm', 'base');
  git(repo, 'worktree', 'add', '-q', '-b', 'worktree-w1', '.claude/worktrees/w1');
  const path = join(repo, '.claude/worktrees/w1');
  const filter = script('filter', `env > "${dir}/env-dump"\nsetsid sleep ${UNIQUE} </dev/null >/dev/null 2>&1 &\ncat`);
  git(path, 'config', 'filter.evil.clean', filter);
  git(path, 'config', 'filter.evil.required', 'true');
  git(path, 'config', 'core.fsmonitor', script('fsmonitor', `touch "${dir}/fsmonitor-ran"`));
  git(path, 'config', 'gpg.program', script('gpg', `touch "${dir}/gpg-ran"`));
  git(path, 'config', 'log.showSignature', 'true');
  writeFileSync(join(path, '.gitattributes'), '* filter=evil\n');
  writeFileSync(join(path, 'tracked.txt'), 'one\ntwo\n');
  // A commit on the branch carrying a signature for `gpg.program` to check (reflog show would).
  const tree = git(path, 'rev-parse', 'HEAD^{tree}').trim();
  const parent = git(path, 'rev-parse', 'HEAD').trim();
  const body = `tree ${tree}\nparent ${parent}\nauthor t <t@t> 1 +0000\ncommitter t <t@t> 1 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n x\n -----END PGP SIGNATURE-----\n\nsigned\n`;
  const signed = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], { cwd: path, input: body, encoding: 'utf8' }).trim();
  git(path, 'update-ref', 'refs/heads/worktree-w1', signed);
  return { repo, path };
}

/** The server's environment as a host session would hand it over, with fake values. */
const HOST_ENV = {
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: dir,
  CLAUDECODE: '1',
  CLAUDE_CODE_SESSION_ID: 'fake-host-session',
  CLAUDE_CODE_MESSAGING_TOKEN: 'fake-host-token',
  COMPUTER_MCP_TOKEN: 'fake-host-credential',
};

describe('git runs nothing the repository configures', () => {
  it('the settle inspection and removal start no filter, fsmonitor or gpg, and leave no process', async () => {
    const { repo } = hostileWorktree();
    const runner = createGitRunner({ env: HOST_ENV });
    const place = worktreePlace(repo, 'w1');
    const report = await inspectWorktree({ git: runner, countLines: countFileLines, clock: systemClock }, place);
    await assert.rejects(
      removeWorktree(
        { git: runner, processes: { withCwd: processesWithCwd, pidPresence }, exists: existsSync },
        { cwd: repo, name: 'w1', force: false, inUse: () => false },
      ),
      {
        code: 'worktree_has_work',
      },
    );
    const dumped = existsSync(join(dir, 'env-dump')) ? readFileSync(join(dir, 'env-dump'), 'utf8') : '';
    const leaked = Object.keys(HOST_ENV).filter((name) => name !== 'PATH' && name !== 'HOME' && dumped.includes(`${name}=`));
    const problems = [
      ...leaked.map((name) => `${name} reached a command the repository configured`),
      ...(dumped === '' ? [] : ['the clean filter ran']),
      ...(sleepers().length === 0 ? [] : [`${sleepers().length} process(es) the filter started are alive`]),
      ...(existsSync(join(dir, 'fsmonitor-ran')) ? ['the fsmonitor hook ran'] : []),
      ...(existsSync(join(dir, 'gpg-ran')) ? ['gpg.program ran'] : []),
    ];
    assert.deepEqual(problems, []);
    // Read as the file is on disk, the filter's `required` notwithstanding.
    assert.equal(report.changes_error, null);
    assert.deepEqual(
      report.files.filter((f) => !f.committed).map((f) => [f.path, f.status, f.lines_added]),
      [
        ['tracked.txt', 'modified', 1],
        ['.gitattributes', 'added', 1],
      ],
    );
    assert.equal(runner.running(), 0);
  });

  it("neither the settle inspection nor removal reads a submodule's dirty content (git would run the submodule's own filter)", async () => {
    const repo = join(dir, 'repo-sub');
    execFileSync('mkdir', ['-p', repo]);
    git(repo, 'init', '-q');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'base');
    git(repo, 'worktree', 'add', '-q', '-b', 'worktree-w2', '.claude/worktrees/w2');
    const path = join(repo, '.claude/worktrees/w2');
    const sub = join(path, 'sub');
    execFileSync('mkdir', ['-p', sub]);
    git(sub, 'init', '-q');
    writeFileSync(join(sub, '.gitattributes'), '* filter=subevil\n');
    writeFileSync(join(sub, 'a.txt'), 'a\n');
    git(sub, 'add', '-A');
    git(sub, 'commit', '-qm', 'sub');
    git(sub, 'config', 'filter.subevil.clean', script('sub-filter', `touch "${dir}/sub-filter-ran"\ncat`));
    git(path, 'add', 'sub');
    git(path, 'commit', '-qm', 'gitlink');
    writeFileSync(join(sub, 'a.txt'), 'a\nb\n');
    const report = await inspectWorktree(
      { git: createGitRunner({ env: HOST_ENV }), countLines: countFileLines, clock: systemClock },
      worktreePlace(repo, 'w2'),
    );
    assert.equal(report.changes_error, null);
    assert.equal(existsSync(join(dir, 'sub-filter-ran')), false, "the submodule's filter ran");
    assert.deepEqual(
      report.files.map((f) => [f.path, f.committed]),
      [['sub', true]],
      'the committed gitlink is still listed',
    );
    const remove = (force: boolean) =>
      removeWorktree(
        { git: createGitRunner({ env: HOST_ENV }), processes: { withCwd: processesWithCwd, pidPresence }, exists: existsSync },
        { cwd: repo, name: 'w2', force, inUse: () => false },
      );
    await assert.rejects(remove(false), (error: { code?: string; message?: string }) => {
      assert.equal(error.code, 'worktree_has_work');
      assert.match(String(error.message), /1 populated submodule\(s\) whose own work is not read \(sub\)/);
      return true;
    });
    assert.equal(existsSync(join(dir, 'sub-filter-ran')), false, "removal's status ran the submodule's filter");
    const removed = await remove(true);
    assert.equal(removed.discarded.populated_submodules, 1);
    assert.equal(existsSync(join(dir, 'sub-filter-ran')), false, "the forced removal ran the submodule's filter");
  });

  it('stop ends the process group of a call in flight, and no call starts after it', async () => {
    // A stand-in git that starts a helper in its own group and waits, its pipes not shared.
    const fake = script('slow-git', `sleep ${UNIQUE} </dev/null >/dev/null 2>&1 &\nwait`);
    const runner = createGitRunner({ bin: fake, env: { PATH: HOST_ENV.PATH } });
    const pending = runner(['status'], dir);
    const started = Date.now();
    while (sleepers().length === 0) {
      assert.ok(Date.now() - started < 60_000, 'the stand-in never started its helper');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(runner.running(), 1);
    runner.stop();
    const out = await pending;
    assert.equal(out.ok ? 'ok' : out.code, 'git_timeout');
    assert.deepEqual(await sleepersAfterKill(), [], 'the helper outlived the call');
    const later = await runner(['status'], dir);
    assert.equal(later.ok ? 'ok' : later.code, 'git_stopped');
    assert.deepEqual(sleepers(), []);
  });
});
