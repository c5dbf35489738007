/**
 * Removing a run's worktree and its branch: the one destructive worktree action, explicit, and refused when it
 * would lose work (uncommitted changes, commits no branch or tag reaches) unless forced, and always refused
 * when the worktree is not provably free: a run or any process working in it, a lock whose process lives or
 * cannot be checked, a rebase, merge, bisect or cherry-pick under way. Git and /proc through injected edges;
 * what it removed (and, when forced, discarded) is reported.
 */
import { join } from 'node:path';
import { ToolError } from '../tool-errors.ts';
import type { GitRunner } from './git.ts';
import { isAtOrBelow, lockPid, parseStatusPaths, parseWorktreeList, type ListedWorktree } from './listing.ts';
import { gitFailure, worktreePlace, type WorktreePlace } from './worktree.ts';

/** Files, commits or processes named in a refusal: enough to recognise them, bounded. */
export const MAX_NAMED_ITEMS = 10;

export type RemovedWorktree = {
  name: string;
  path: string;
  branch: string;
  /** The branch's last commit before it was deleted: `git branch <name> <head_commit>` brings it back while git keeps the object. */
  head_commit: string | null;
  forced: boolean;
  /** What forcing threw away (zero when nothing was). */
  discarded: { uncommitted_files: number; unreachable_commits: number; populated_submodules: number };
  /** The pid of the lock that was lifted because its process was gone; null when the worktree was not locked. */
  stale_lock_pid: number | null;
  /** Processes whose cwd could not be read (another user's), so not known to be outside the worktree. */
  cwd_unreadable_processes: number;
};

/** The process table as removal needs it (lib/process/occupants.ts). */
export interface WorktreeProcesses {
  /** Who works below a directory; `unverifiable` (with why) where the platform cannot say (no /proc cwd). */
  readonly withCwd: (
    matches: (cwd: string) => boolean,
  ) => { readonly pids: readonly number[]; readonly unreadable: number } | { readonly unverifiable: string };
  readonly pidPresence: (pid: number) => 'lives' | 'gone' | 'unprovable';
}

export interface RemoveDeps {
  readonly git: GitRunner;
  readonly processes: WorktreeProcesses;
  /** Whether a path exists (git's own markers of an operation under way). */
  readonly exists: (path: string) => boolean;
}

export interface RemoveRequest {
  readonly cwd: string;
  readonly name: string;
  readonly force: boolean;
  /** True while a run of this adapter still works in that path or below it. */
  readonly inUse: (path: string) => boolean;
}

async function must(git: GitRunner, args: readonly string[], cwd: string, what: string): Promise<string> {
  const out = await git(args, cwd);
  if (!out.ok) throw new ToolError('git_failed', `${what}: ${gitFailure(out)}`);
  return out.stdout;
}

async function locate(git: GitRunner, cwd: string, name: string): Promise<{ place: WorktreePlace; listed: ListedWorktree }> {
  const top = await git(['rev-parse', '--path-format=absolute', '--git-common-dir'], cwd);
  if (!top.ok) throw new ToolError('invalid_arguments', 'cwd must be inside a git repository', '/cwd');
  // The main checkout is the first entry of the list; worktrees of runs live below it.
  const listed = parseWorktreeList(await must(git, ['worktree', 'list', '--porcelain', '-z'], cwd, 'listing worktrees'));
  const main = listed[0];
  if (main === undefined) throw new ToolError('git_failed', 'git listed no worktree');
  const place = worktreePlace(main.path, name);
  const entry = listed.find((worktree) => worktree.path === place.path);
  if (entry === undefined)
    throw new ToolError('worktree_not_found', 'no worktree by that name in this repository (under .claude/worktrees)', '/name');
  return { place, listed: entry };
}

function named(items: readonly (string | number)[]): string {
  const shown = items.slice(0, MAX_NAMED_ITEMS).join(', ');
  return items.length > MAX_NAMED_ITEMS ? `${shown} and ${items.length - MAX_NAMED_ITEMS} more` : shown;
}

/** Refuses while a run of this server or any process works in the worktree; the count of unreadable cwds otherwise. */
function refuseIfOccupied(deps: RemoveDeps, request: RemoveRequest, place: WorktreePlace): number {
  if (request.inUse(place.path))
    throw new ToolError(
      'run_active',
      'a run of this adapter still works in that worktree (or has not said yet where it works); wait for it to settle or cancel it',
      '/name',
    );
  const inside = deps.processes.withCwd((cwd) => isAtOrBelow(cwd, place.path));
  if ('unverifiable' in inside)
    throw new ToolError(
      'worktree_occupancy_unverifiable',
      `whether a process works in worktree ${place.name} cannot be known here (${inside.unverifiable}); nothing was removed, with or without force: remove it with git once you know it is free`,
      '/name',
    );
  if (inside.pids.length > 0)
    throw new ToolError(
      'worktree_occupied',
      `${inside.pids.length} process(es) have their working directory in that worktree (pid ${named(inside.pids)}); nothing was removed, with or without force`,
      '/name',
    );
  return inside.unreadable;
}

/** The pid of a lock that may be lifted (its process is gone); refuses any other lock. Null when not locked. */
function staleLockPid(deps: RemoveDeps, lock: string | null): number | null {
  if (lock === null) return null;
  const pid = lockPid(lock);
  if (pid === null)
    throw new ToolError(
      'worktree_lock_unverifiable',
      `the worktree is locked, and not by Claude Code (its lock names no process this server can check); nothing was removed, with or without force: unlock it yourself if the lock is yours`,
      '/name',
    );
  const presence = deps.processes.pidPresence(pid);
  if (presence === 'lives')
    throw new ToolError(
      'worktree_lock_live',
      `the worktree is locked by pid ${pid}, and a process with that pid lives; nothing was removed, with or without force`,
      '/name',
    );
  if (presence === 'unprovable')
    throw new ToolError(
      'worktree_lock_unverifiable',
      `the worktree is locked by pid ${pid}, and /proc cannot prove that process gone (it hides processes, or this server's pid namespace is not the first); nothing was removed, with or without force`,
      '/name',
    );
  return pid;
}

/** git's own markers of an operation under way in a worktree (what `git status` reads). */
const OPERATION_MARKERS = [
  ['rebase-merge', 'rebase'],
  ['rebase-apply', 'rebase or am'],
  ['MERGE_HEAD', 'merge'],
  ['CHERRY_PICK_HEAD', 'cherry-pick'],
  ['REVERT_HEAD', 'revert'],
  ['BISECT_LOG', 'bisect'],
] as const;

/** Where git keeps this worktree's markers, in OPERATION_MARKERS order. */
async function markerPaths(deps: RemoveDeps, place: WorktreePlace): Promise<string[]> {
  const args = ['rev-parse', '--path-format=absolute', ...OPERATION_MARKERS.flatMap(([marker]) => ['--git-path', marker])];
  const paths = (await must(deps.git, args, place.path, 'locating its git directory')).split('\n');
  if (paths.length < OPERATION_MARKERS.length) throw new ToolError('git_failed', 'git named fewer paths than asked for');
  return paths;
}

function refuseIfOperationUnderWay(deps: RemoveDeps, markers: readonly string[]): void {
  const under = OPERATION_MARKERS.filter((_, i) => deps.exists(markers[i] ?? '')).map(([, operation]) => operation);
  if (under.length > 0)
    throw new ToolError(
      'worktree_operation_in_progress',
      `a ${under.join(', ')} is under way in that worktree; finish or abort it there first; nothing was removed, with or without force`,
      '/name',
    );
}

async function pendingWork(deps: RemoveDeps, place: WorktreePlace, branchExists: boolean): Promise<PendingWork> {
  const { git, exists } = deps;
  // A dirty submodule is read by a git status inside it, under its own configuration, which may name commands
  // to run: never read, a populated submodule counts as work of its own.
  const status = await must(
    git,
    ['status', '--porcelain', '-z', '--no-renames', '--untracked-files=all', '--ignore-submodules=dirty'],
    place.path,
    'reading its status',
  );
  const index = await must(git, ['ls-files', '--stage', '-z'], place.path, 'listing its submodules');
  // Commits of its HEAD (detached or not) and of its branch that no other branch and no tag reaches would be lost.
  const tips = branchExists ? ['HEAD', `refs/heads/${place.branch}`] : ['HEAD'];
  const commits = await must(
    git,
    ['rev-list', ...tips, '--not', `--exclude=${place.branch}`, '--branches', '--tags'],
    place.path,
    'comparing its commits',
  );
  return {
    uncommitted: parseStatusPaths(status),
    unreachable: commits.split('\n').filter((line) => line !== ''),
    submodules: submodulePaths(index).filter((path) => exists(join(place.path, path, '.git'))),
  };
}

interface PendingWork {
  readonly uncommitted: string[];
  readonly unreachable: string[];
  /** Populated submodules (their checkout has its .git): whatever they hold is not read. */
  readonly submodules: string[];
}

/** The paths of gitlink entries (mode 160000) in `git ls-files --stage -z` output. */
function submodulePaths(index: string): string[] {
  return index
    .split('\0')
    .filter((entry) => entry.startsWith('160000 '))
    .map((entry) => entry.slice(entry.indexOf('\t') + 1));
}

function refuseIfWork(request: RemoveRequest, work: PendingWork): void {
  if (request.force || (work.uncommitted.length === 0 && work.unreachable.length === 0 && work.submodules.length === 0)) return;
  const parts = [
    work.uncommitted.length > 0 ? `${work.uncommitted.length} uncommitted file(s) (${named(work.uncommitted)})` : null,
    work.unreachable.length > 0 ? `${work.unreachable.length} commit(s) no other branch or tag reaches` : null,
    work.submodules.length > 0
      ? `${work.submodules.length} populated submodule(s) whose own work is not read (${named(work.submodules)})`
      : null,
  ].filter((part): part is string => part !== null);
  throw new ToolError(
    'worktree_has_work',
    `the worktree holds ${parts.join(' and ')}; merge or commit what you want to keep, or pass force: true to discard it`,
    '/name',
  );
}

/**
 * Lifts the lock judged stale, only while it is still that very lock: `git worktree unlock` lifts whatever lock
 * is there, and a session may have locked the worktree again since it was judged. A lock taken after this makes
 * the (single-force) remove refuse.
 */
async function liftStaleLock(deps: RemoveDeps, request: RemoveRequest, place: WorktreePlace, judged: string | null): Promise<void> {
  const now = (await locate(deps.git, request.cwd, request.name)).listed.lock;
  if (now !== judged)
    throw new ToolError(
      'worktree_lock_unverifiable',
      'the worktree was locked again while this server checked it; nothing was removed, with or without force',
      '/name',
    );
  await must(deps.git, ['worktree', 'unlock', place.path], place.repository, 'unlocking it');
}

export async function removeWorktree(deps: RemoveDeps, request: RemoveRequest): Promise<RemovedWorktree> {
  const { git } = deps;
  const { place, listed } = await locate(git, request.cwd, request.name);
  refuseIfOccupied(deps, request, place);
  const lockPidGone = staleLockPid(deps, listed.lock);
  const markers = await markerPaths(deps, place);
  refuseIfOperationUnderWay(deps, markers);
  const head = await git(['rev-parse', '--verify', '--quiet', `refs/heads/${place.branch}`], place.path);
  const work = await pendingWork(deps, place, head.ok);
  refuseIfWork(request, work);
  // Right before the removal, after every awaited call: a run, a process or an operation may have started meanwhile.
  const unreadable = refuseIfOccupied(deps, request, place);
  refuseIfOperationUnderWay(deps, markers);
  if (lockPidGone !== null) await liftStaleLock(deps, request, place, listed.lock);
  await must(git, ['worktree', 'remove', ...(request.force ? ['--force'] : []), place.path], place.repository, 'removing the worktree');
  if (head.ok) await must(git, ['branch', '-D', place.branch], place.repository, 'deleting its branch');
  return {
    name: place.name,
    path: place.path,
    branch: place.branch,
    head_commit: head.ok ? head.stdout.trim() : null,
    forced: request.force,
    discarded: request.force
      ? {
          uncommitted_files: work.uncommitted.length,
          unreachable_commits: work.unreachable.length,
          populated_submodules: work.submodules.length,
        }
      : { uncommitted_files: 0, unreachable_commits: 0, populated_submodules: 0 },
    stale_lock_pid: lockPidGone,
    cwd_unreadable_processes: unreadable,
  };
}
