// Worktree removal over a scripted git and a scripted process table: every refusal, what each leaves
// untouched, and the one path that removes. No process is started.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { removeWorktree, type RemoveDeps, type RemovedWorktree } from '../../lib/worktree/remove.ts';
import { isAtOrBelow, lockPid, parseStatusPaths, parseWorktreeList, runUsesWorktree } from '../../lib/worktree/listing.ts';
import type { GitOutcome } from '../../lib/worktree/git.ts';
import { isToolError } from '../../lib/tool-errors.ts';

const ok = (stdout: string): GitOutcome => ({ ok: true, stdout });
const HEAD = 'b'.repeat(40);
const LOST = 'c'.repeat(40);
const PATH = '/repo/.claude/worktrees/w1';
const GIT_DIR = '/repo/.git/worktrees/w1';
const MARKERS = ['rebase-merge', 'rebase-apply', 'MERGE_HEAD', 'CHERRY_PICK_HEAD', 'REVERT_HEAD', 'BISECT_LOG'];

interface Scene {
  lock?: string | null;
  status?: string;
  /** Commits rev-list prints for these arguments. */
  revList?: (args: readonly string[]) => string;
  present?: readonly string[];
  /** Markers present at the n-th look (a look asks for every marker once). */
  presentAtLook?: (look: number) => readonly string[];
  /** Pids whose cwd is given, per look at the process table (the last repeats). */
  cwds?: ReadonlyArray<ReadonlyArray<readonly [number, string]>>;
  pidPresence?: 'lives' | 'gone' | 'unprovable';
  /** What `ls-files --stage -z` prints (gitlinks are mode 160000). */
  index?: string;
  /** Paths `exists` finds besides the operation markers. */
  populated?: readonly string[];
  /** The lock each `worktree list` shows, per listing (the last repeats); `lock` when absent. */
  locks?: ReadonlyArray<string | null>;
  /** The platform cannot read any process's cwd (darwin): the withCwd answer, with why. */
  unverifiable?: string;
  /** inUse answers, per call (the last repeats). */
  inUse?: readonly boolean[];
  force?: boolean;
}

function stage(scene: Scene) {
  const calls: string[] = [];
  const lockField = (lock: string | null | undefined): string =>
    lock === undefined || lock === null ? '' : lock === '' ? 'locked\0' : `locked ${lock}\0`;
  let listings = 0;
  const listing = (): string => {
    const lock = scene.locks === undefined ? scene.lock : scene.locks[Math.min(listings++, scene.locks.length - 1)];
    return `worktree /repo\0HEAD ${HEAD}\0branch refs/heads/main\0\0worktree ${PATH}\0HEAD ${HEAD}\0detached\0${lockField(lock)}\0`;
  };
  const git: RemoveDeps['git'] = async (args) => {
    calls.push(args.join(' '));
    const [a, b] = args;
    if (a === 'rev-parse' && args.includes('--git-common-dir')) return ok('/repo/.git\n');
    if (a === 'rev-parse' && args.includes('--git-path')) return ok(MARKERS.map((m) => `${GIT_DIR}/${m}\n`).join(''));
    if (a === 'rev-parse' && b === '--verify') return ok(`${HEAD}\n`);
    if (a === 'worktree' && b === 'list') return ok(listing());
    if (a === 'status') return ok(scene.status ?? '');
    if (a === 'ls-files') return ok(scene.index ?? '');
    if (a === 'rev-list') return ok(scene.revList?.(args) ?? '');
    if ((a === 'worktree' && (b === 'unlock' || b === 'remove')) || a === 'branch') return ok('');
    assert.fail(`unexpected git ${args.join(' ')}`);
  };
  let looks = 0;
  let inUseCalls = 0;
  let markerReads = 0;
  const deps: RemoveDeps = {
    git,
    exists: (path) => {
      const look = Math.floor(markerReads++ / MARKERS.length);
      if (scene.populated?.includes(path)) return true;
      const present = scene.presentAtLook?.(look) ?? scene.present ?? [];
      return present.some((marker) => path === `${GIT_DIR}/${marker}`);
    },
    processes: {
      withCwd: (matches) => {
        if (scene.unverifiable !== undefined) return { unverifiable: scene.unverifiable };
        const table = scene.cwds?.[Math.min(looks++, (scene.cwds?.length ?? 1) - 1)] ?? [];
        return { pids: table.filter(([, cwd]) => matches(cwd)).map(([pid]) => pid), unreadable: 2 };
      },
      pidPresence: () => scene.pidPresence ?? 'gone',
    },
  };
  const inUse = (): boolean => scene.inUse?.[Math.min(inUseCalls++, scene.inUse.length - 1)] ?? false;
  const run = () => removeWorktree(deps, { cwd: '/repo', name: 'w1', force: scene.force ?? false, inUse });
  return { calls, run, destructive: () => calls.filter((c) => /^(worktree (unlock|remove)|branch -D)/.test(c)) };
}

async function refusal(scene: Scene): Promise<{ code: string; message: string; destructive: string[] }> {
  const staged = stage(scene);
  try {
    await staged.run();
  } catch (error) {
    if (isToolError(error)) return { code: error.code, message: error.message, destructive: staged.destructive() };
    throw error;
  }
  assert.fail('not refused');
}

/** The same scene refused alike with and without force, and nothing unlocked or removed. */
async function refusedEitherWay(scene: Scene, code: string): Promise<string> {
  for (const force of [false, true]) {
    const got = await refusal({ ...scene, force });
    assert.deepEqual([got.code, got.destructive], [code, []], `force: ${force}`);
  }
  return (await refusal(scene)).message;
}

describe('claude.worktree.remove refuses what it does not own', () => {
  it('occupancy that cannot be read (darwin): worktree_occupancy_unverifiable, with or without force, why named', async () => {
    const message = await refusedEitherWay({ unverifiable: 'no /proc on macOS' }, 'worktree_occupancy_unverifiable');
    assert.match(message, /no \/proc on macOS/);
  });

  it('a lock naming a live pid: worktree_lock_live, the pid as evidence', async () => {
    const message = await refusedEitherWay({ lock: 'claude session live (pid 4242)', pidPresence: 'lives' }, 'worktree_lock_live');
    assert.match(message, /pid 4242/);
  });

  it('a lock Claude Code did not write, or whose pid /proc cannot prove gone: worktree_lock_unverifiable', async () => {
    await refusedEitherWay({ lock: 'kept by hand' }, 'worktree_lock_unverifiable');
    await refusedEitherWay({ lock: 'ci job (pid 12)', pidPresence: 'gone' }, 'worktree_lock_unverifiable');
    await refusedEitherWay({ lock: '' }, 'worktree_lock_unverifiable');
    await refusedEitherWay({ lock: 'claude session live (pid 4242)', pidPresence: 'unprovable' }, 'worktree_lock_unverifiable');
  });

  it('a process with its cwd in the worktree or below it: worktree_occupied, its pids named', async () => {
    const message = await refusedEitherWay({ cwds: [[[77, `${PATH}/src/deep`]]] }, 'worktree_occupied');
    assert.match(message, /1 process\(es\).*pid 77/);
    await refusedEitherWay({ cwds: [[[78, PATH]]] }, 'worktree_occupied');
  });

  it('a process that enters while git is read is found by the look right before removal', async () => {
    const got = await refusal({ cwds: [[], [[91, `${PATH}/sub`]]] });
    assert.deepEqual([got.code, got.destructive], ['worktree_occupied', []]);
  });

  it('a run that starts using it while git is read: run_active before anything is removed', async () => {
    const got = await refusal({ inUse: [false, true], force: true });
    assert.deepEqual([got.code, got.destructive], ['run_active', []]);
  });

  it('a rebase, merge, bisect or cherry-pick under way: worktree_operation_in_progress, named', async () => {
    for (const [marker, name] of [
      ['rebase-merge', 'rebase'],
      ['MERGE_HEAD', 'merge'],
      ['BISECT_LOG', 'bisect'],
      ['CHERRY_PICK_HEAD', 'cherry-pick'],
    ] as const) {
      const message = await refusedEitherWay({ present: [marker] }, 'worktree_operation_in_progress');
      assert.match(message, new RegExp(`a ${name} is under way`));
    }
  });

  it('an operation begun while git is read is found by the look right before removal', async () => {
    const got = await refusal({ force: true, presentAtLook: (look) => (look > 0 ? ['rebase-apply'] : []) });
    assert.deepEqual([got.code, got.destructive], ['worktree_operation_in_progress', []]);
    assert.match(got.message, /a rebase or am is under way/);
  });

  it('a commit only its detached HEAD reaches is work: refused without force, counted when forced', async () => {
    const revList = (args: readonly string[]) => (args.includes('HEAD') && args.includes('--tags') ? `${LOST}\n` : '');
    const got = await refusal({ revList });
    assert.deepEqual([got.code, got.destructive], ['worktree_has_work', []]);
    assert.match(got.message, /1 commit\(s\) no other branch or tag reaches/);
    const removed = await stage({ revList, force: true }).run();
    assert.equal(removed.discarded.unreachable_commits, 1);
  });

  it('a rename listed with its origin counts once, its origin not read as a file; status is read with --no-renames', async () => {
    const status = 'R  new name.txt\0old name.txt\0?? u.txt\0';
    assert.match((await refusal({ status })).message, /holds 2 uncommitted file\(s\) \(new name\.txt, u\.txt\);/);
    const staged = stage({ status, force: true });
    const removed: RemovedWorktree = await staged.run();
    assert.equal(removed.discarded.uncommitted_files, 2);
    assert.ok(staged.calls.some((c) => c.startsWith('status ') && c.includes('--no-renames')));
  });
});

describe('claude.worktree.remove removes what is provably free', () => {
  it('unlocked and clean: removed without an unlock, its branch deleted', async () => {
    const staged = stage({
      cwds: [
        [
          [5, '/repo'],
          [6, `${PATH}-other`],
        ],
      ],
    });
    const removed = await staged.run();
    assert.deepEqual(staged.destructive(), [`worktree remove ${PATH}`, 'branch -D worktree-w1']);
    assert.deepEqual([removed.stale_lock_pid, removed.cwd_unreadable_processes, removed.head_commit], [null, 2, HEAD]);
  });

  it('a lock whose pid is gone is lifted, and only then is the worktree removed', async () => {
    const staged = stage({ lock: 'claude session live (pid 4242 start 1234567)', pidPresence: 'gone' });
    const removed = await staged.run();
    assert.deepEqual(staged.destructive(), [`worktree unlock ${PATH}`, `worktree remove ${PATH}`, 'branch -D worktree-w1']);
    assert.equal(removed.stale_lock_pid, 4242);
  });

  it('a populated submodule is work (its own state is never read): refused without force, counted when forced', async () => {
    const scene = {
      index: `100644 ${HEAD} 0\ta.txt\x00160000 ${HEAD} 0\tsub\x00160000 ${HEAD} 0\tempty\0`,
      populated: [`${PATH}/sub/.git`],
    };
    const got = await refusal(scene);
    assert.deepEqual([got.code, got.destructive], ['worktree_has_work', []]);
    assert.match(got.message, /1 populated submodule\(s\) whose own work is not read \(sub\)/);
    const staged = stage({ ...scene, force: true });
    assert.equal((await staged.run()).discarded.populated_submodules, 1);
    assert.ok(staged.calls.some((c) => c.startsWith('status ') && c.includes('--ignore-submodules=dirty')));
  });

  it('a stale lock replaced while the checks ran (a session locked it again) is not lifted: refused, nothing unlocked', async () => {
    const got = await refusal({
      locks: ['claude session live (pid 4242 start 1234567)', 'claude session live (pid 5151 start 7654321)'],
      pidPresence: 'gone',
    });
    assert.deepEqual([got.code, got.destructive], ['worktree_lock_unverifiable', []]);
    assert.match(got.message, /locked again/);
  });
});

describe('worktree listings and run places', () => {
  it('worktree list -z: paths and lock reasons, any path text', () => {
    assert.deepEqual(
      parseWorktreeList(
        `worktree /r\0HEAD ${HEAD}\0branch refs/heads/main\0\0worktree /r/a b\nc\0detached\0locked why (pid 9)\0\0worktree /r/x\0locked\0\0`,
      ),
      [
        { path: '/r', lock: null },
        { path: '/r/a b\nc', lock: 'why (pid 9)' },
        { path: '/r/x', lock: '' },
      ],
    );
  });
  it('a lock names a pid only as the native writes it', () => {
    assert.equal(lockPid('claude session live (pid 123)'), 123);
    assert.equal(lockPid('claude session live (pid 123 start 98765)'), 123);
    assert.equal(lockPid('claude agent a-1 (pid 7)'), 7);
    assert.equal(lockPid('kept by me (pid 123)'), null);
    assert.equal(lockPid('claude session live (pid 0)'), null);
  });
  it('status -z: a rename or copy origin is skipped', () => {
    assert.deepEqual(parseStatusPaths('R  a\0b\0 M c\0C  d\0e\0?? f\0'), ['a', 'c', 'd', 'f']);
  });
  it('a run uses a worktree at or below its path; a resumed run before its init uses every one', () => {
    const run = { cwd: '/repo', worktreePath: null, initCwd: null, resumes: false };
    assert.equal(isAtOrBelow(`${PATH}-other`, PATH), false);
    assert.equal(runUsesWorktree(run, PATH), false);
    assert.equal(runUsesWorktree({ ...run, cwd: `${PATH}/sub` }, PATH), true);
    assert.equal(runUsesWorktree({ ...run, resumes: true }, PATH), true);
    assert.equal(runUsesWorktree({ ...run, resumes: true, initCwd: '/repo/.claude/worktrees/w2' }, PATH), false);
    assert.equal(runUsesWorktree({ ...run, initCwd: `${PATH}/x` }, PATH), true);
    assert.equal(runUsesWorktree({ ...run, worktreePath: PATH, initCwd: '/elsewhere' }, PATH), true);
  });
});
