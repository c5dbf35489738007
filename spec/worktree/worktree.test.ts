// The worktree logic over a scripted git: parsing of git's -z listings, the counts and the file-list bound,
// the checks before a run, and the view a model reads. No process is started.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  countChanges,
  inspectWorktree,
  MAX_WORKTREE_FILES,
  parseNameStatus,
  parseNumstat,
  WORKTREE_INSPECT_TIMEOUT_MS,
} from '../../lib/worktree/changes.ts';
import { createManualClock } from '../helpers/manual-clock.ts';
import { checkWorktreeRequest, worktreeFromCwd, worktreePlace } from '../../lib/worktree/worktree.ts';
import type { GitOutcome } from '../../lib/worktree/git.ts';
import { isToolError } from '../../lib/tool-errors.ts';
import { parseRunInput } from '../../lib/tools/run-input.ts';

const ok = (stdout: string): GitOutcome => ({ ok: true, stdout });
const failed: GitOutcome = { ok: false, code: 'git_exit_nonzero', exitCode: 128, stderr: 'fatal' };
const BASE = 'a'.repeat(40);
const HEAD = 'b'.repeat(40);

/** A git that answers by the first two arguments; unknown calls fail the test. */
function scripted(answers: Record<string, GitOutcome>): (args: readonly string[]) => GitOutcome {
  return (args) => {
    const key = args.slice(0, 2).join(' ');
    const found =
      answers[key] ??
      answers[
        `${args[0]} ${args.includes('--name-status') ? 'names' : args.includes('--numstat') ? 'numbers' : ''}${args.includes(BASE) ? ' committed' : ''}`
      ];
    if (found === undefined) assert.fail(`unexpected git ${args.join(' ')}`);
    return found;
  };
}

describe('git listings', () => {
  it('name-status -z: letters and paths, any path text', () => {
    assert.deepEqual(parseNameStatus('M\0a b.txt\0A\0new\nline\0D\0gone\0T\0link\0'), [
      { path: 'a b.txt', status: 'modified' },
      { path: 'new\nline', status: 'added' },
      { path: 'gone', status: 'deleted' },
      { path: 'link', status: 'modified' },
    ]);
  });
  it('numstat -z: counts, and null for a binary file', () => {
    const parsed = parseNumstat('3\t1\ta.txt\0-\t-\timg.png\0');
    assert.deepEqual(
      [...parsed],
      [
        ['a.txt', { added: 3, deleted: 1 }],
        ['img.png', { added: null, deleted: null }],
      ],
    );
  });
  it('counts add up by status and lines, binary files adding no lines', () => {
    assert.deepEqual(
      countChanges([
        { path: 'a', status: 'added', committed: true, lines_added: 2, lines_deleted: 0 },
        { path: 'b', status: 'modified', committed: true, lines_added: null, lines_deleted: null },
        { path: 'c', status: 'deleted', committed: true, lines_added: 0, lines_deleted: 5 },
      ]),
      { files: 3, added: 1, modified: 1, deleted: 1, lines_added: 2, lines_deleted: 5 },
    );
  });
});

describe('inspectWorktree', () => {
  const place = worktreePlace('/repo', 'w1');
  const inspect = (committedFiles: number, answers: Record<string, GitOutcome> = {}) => {
    const names = Array.from({ length: committedFiles }, (_, i) => `A\0f${i}\0`).join('');
    const numbers = Array.from({ length: committedFiles }, (_, i) => `1\t0\tf${i}\0`).join('');
    const git = scripted({
      'rev-parse --verify': ok(`${HEAD}\n`),
      'reflog show': ok(`${HEAD}\n${BASE}\n`),
      'diff names committed': ok(names),
      'diff numbers committed': ok(numbers),
      'diff names': ok('M\0shared.txt\0'),
      'diff numbers': ok('1\t1\tshared.txt\0'),
      'ls-files --others': ok('u.txt\0'),
      ...answers,
    });
    return inspectWorktree({ git: async (args) => git(args), countLines: async () => 3, clock: createManualClock() }, place);
  };

  it('base from the oldest reflog entry; committed and uncommitted apart; untracked files counted as added', async () => {
    const report = await inspect(1);
    assert.equal(report.base_commit, BASE);
    assert.equal(report.head_commit, HEAD);
    assert.deepEqual(report.committed, { files: 1, added: 1, modified: 0, deleted: 0, lines_added: 1, lines_deleted: 0 });
    assert.deepEqual(report.uncommitted, { files: 2, added: 1, modified: 1, deleted: 0, lines_added: 4, lines_deleted: 1 });
    assert.deepEqual(
      report.files.map((f) => [f.path, f.committed]),
      [
        ['f0', true],
        ['shared.txt', false],
        ['u.txt', false],
      ],
    );
    assert.equal(report.changes_error, null);
  });

  it(`lists at most ${MAX_WORKTREE_FILES} files, says when it cut, and counts them all`, async () => {
    const at = await inspect(MAX_WORKTREE_FILES - 2); // + shared.txt + u.txt = exactly the bound
    assert.equal(at.files.length, MAX_WORKTREE_FILES);
    assert.equal(at.files_truncated, false);
    const over = await inspect(MAX_WORKTREE_FILES - 1);
    assert.equal(over.files.length, MAX_WORKTREE_FILES);
    assert.equal(over.files_truncated, true);
    assert.equal(over.committed?.files, MAX_WORKTREE_FILES - 1);
  });

  it('a failing git call is data: counts null, changes_error names the code', async () => {
    const report = await inspect(0, { 'ls-files --others': { ok: false, code: 'git_timeout', exitCode: null, stderr: '' } });
    assert.equal(report.uncommitted, null);
    assert.deepEqual(report.changes_error, { code: 'git_timeout', message: 'git ls-files: git did not answer in time' });
  });

  it(`past WORKTREE_INSPECT_TIMEOUT_MS (${WORKTREE_INSPECT_TIMEOUT_MS} ms) the counts are null and say why; just before, it still waits`, async () => {
    const clock = createManualClock();
    let countsStarted = 0;
    const git = scripted({
      'rev-parse --verify': ok(`${HEAD}\n`),
      'reflog show': ok(`${HEAD}\n${BASE}\n`),
      'diff names committed': ok(''),
      'diff numbers committed': ok(''),
      'diff names': ok(''),
      'diff numbers': ok(''),
      'ls-files --others': ok('fifo\0'),
    });
    // A line count that never answers (what a FIFO opened without O_NONBLOCK did).
    const never = new Promise<number | null>(() => {});
    const countLines = (): Promise<number | null> => {
      countsStarted += 1;
      return never;
    };
    let settled: unknown = null;
    const pending = inspectWorktree({ git: async (args) => git(args), countLines, clock }, place).then((r) => (settled = r));
    while (countsStarted === 0) await new Promise((resolve) => setImmediate(resolve));
    clock.advance(WORKTREE_INSPECT_TIMEOUT_MS - 1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, null, 'not given up before the bound');
    clock.advance(1);
    for (let i = 0; i < 3 && settled === null; i += 1) await new Promise((resolve) => setImmediate(resolve));
    assert.notEqual(settled, null, 'still waiting at the bound');
    const report = await pending;
    assert.equal(report.changes_error?.code, 'worktree_inspect_timeout');
    assert.deepEqual(
      [report.head_commit, report.base_commit, report.committed, report.uncommitted, report.files, report.path],
      [null, null, null, null, [], place.path],
      'nothing half-read is reported',
    );
    assert.equal(clock.pending(), 0, 'no timer left');
  });

  it('without a reflog the committed counts are unknown, and said to be', async () => {
    const report = await inspect(0, { 'reflog show': failed });
    assert.equal(report.base_commit, null);
    assert.equal(report.committed, null);
    assert.equal(report.changes_error?.code, 'base_commit_unknown');
  });
});

describe('before a run asks for a worktree', () => {
  const top = ok('/repo\n/repo/.git\n');
  const refusal = (fn: () => unknown): { code: string; path: string | undefined; message: string } => {
    try {
      fn();
    } catch (error) {
      if (isToolError(error)) return { code: error.code, path: error.path, message: error.message };
      throw error;
    }
    assert.fail('not refused');
  };
  it("outside a repository, a taken folder or branch, an empty repository, a run's own worktree: refused at /worktree", () => {
    const check = (answers: Record<string, GitOutcome>, exists = false) =>
      refusal(() =>
        checkWorktreeRequest(
          scripted({ 'rev-parse --path-format=absolute': top, 'rev-parse --verify': failed, ...answers }),
          '/repo',
          'w1',
          () => exists,
        ),
      );
    assert.match(check({ 'rev-parse --path-format=absolute': failed }).message, /inside a git repository/);
    const taken = check({}, true);
    assert.deepEqual([taken.code, taken.path], ['invalid_arguments', '/worktree']);
    assert.equal(taken.message.includes('w1'), false, 'the submitted name is not echoed');
    assert.match(taken.message, /the worktree exists already/);
    assert.deepEqual(check({ 'rev-parse --path-format=absolute': ok('/repo/.claude/worktrees/x\n/repo/.git\n') }).path, '/worktree');
    const branchTaken = scripted({ 'rev-parse --path-format=absolute': top, 'rev-parse --verify': ok(`${HEAD}\n`) });
    const branch = refusal(() => checkWorktreeRequest(branchTaken, '/repo', 'w1', () => false));
    assert.deepEqual([branch.code, branch.path], ['invalid_arguments', '/worktree']);
    assert.equal(branch.message.includes('w1'), false, 'the submitted name is not echoed');
    assert.match(branch.message, /branch \(worktree-<name>\) exists already/);
    assert.match(check({}).message, /at least one commit/);
  });
  it('a free name in a repository with a commit: the place the native will use', () => {
    let calls = 0;
    const git = (args: readonly string[]): GitOutcome => {
      calls += 1;
      if (args[0] === 'rev-parse' && args[1] === '--path-format=absolute') return top;
      return args.includes('refs/heads/worktree-w1') ? failed : ok(`${HEAD}\n`);
    };
    assert.deepEqual(
      checkWorktreeRequest(git, '/repo/sub', 'w1', () => false),
      { name: 'w1', repository: '/repo', path: '/repo/.claude/worktrees/w1', branch: 'worktree-w1' },
    );
    assert.equal(calls, 3);
  });
  it('the native cwd of a worktree names it; any other cwd does not', () => {
    assert.deepEqual(worktreeFromCwd('/r/.claude/worktrees/w-1'), worktreePlace('/r', 'w-1'));
    assert.equal(worktreeFromCwd('/r/.claude/worktrees/w-1/sub'), null);
    assert.equal(worktreeFromCwd('/r'), null);
  });
  it('worktree with resume or continue needs fork_session', () => {
    const ctx = {
      nativeArgNames: new Set(['worktree', 'resume_session_id', 'continue_previous', 'fork_session']),
      defaultCwd: '/',
      isDirectory: () => true,
    };
    const id = '00000000-0000-4000-8000-000000000000';
    assert.deepEqual(refusal(() => parseRunInput({ prompt: 'x', worktree: 'w', resume_session_id: id }, ctx)).path, '/worktree');
    assert.deepEqual(refusal(() => parseRunInput({ prompt: 'x', worktree: 'w', continue_previous: true }, ctx)).path, '/worktree');
    assert.equal(
      parseRunInput({ prompt: 'x', worktree: 'w', resume_session_id: id, fork_session: true }, ctx).nativeOptions['worktree'],
      'w',
    );
  });
});
