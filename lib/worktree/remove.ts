/**
 * Removing a run's worktree and its branch: the one destructive worktree action, explicit and refused when it
 * would lose work (uncommitted changes, or commits no other branch reaches) unless forced. Git through an
 * injected runner; what it removed (and, when forced, discarded) is reported.
 */
import { ToolError } from '../tool-errors.ts';
import type { GitRunner } from './git.ts';
import { gitFailure, worktreePlace, type WorktreePlace } from './worktree.ts';

/** Files or commits named in a refusal: enough to recognise the work, bounded. */
export const MAX_NAMED_ITEMS = 10;

export type RemovedWorktree = {
  name: string;
  path: string;
  branch: string;
  /** The branch's last commit before it was deleted: `git branch <name> <head_commit>` brings it back while git keeps the object. */
  head_commit: string | null;
  forced: boolean;
  /** What forcing threw away (zero when nothing was). */
  discarded: { uncommitted_files: number; unreachable_commits: number };
};

export interface RemoveRequest {
  readonly cwd: string;
  readonly name: string;
  readonly force: boolean;
  /** True while a run of this adapter still works in that path. */
  readonly inUse: (path: string) => boolean;
}

async function must(git: GitRunner, args: readonly string[], cwd: string, what: string): Promise<string> {
  const out = await git(args, cwd);
  if (!out.ok) throw new ToolError('git_failed', `${what}: ${gitFailure(out)}`);
  return out.stdout;
}

async function locate(git: GitRunner, cwd: string, name: string): Promise<WorktreePlace> {
  const top = await git(['rev-parse', '--path-format=absolute', '--git-common-dir'], cwd);
  if (!top.ok) throw new ToolError('invalid_arguments', 'cwd must be inside a git repository', '/cwd');
  // The main checkout is the first entry of the list; worktrees of runs live below it.
  const listed = await must(git, ['worktree', 'list', '--porcelain', '-z'], cwd, 'listing worktrees');
  const paths = listed
    .split('\0')
    .filter((field) => field.startsWith('worktree '))
    .map((field) => field.slice('worktree '.length));
  const main = paths[0];
  if (main === undefined) throw new ToolError('git_failed', 'git listed no worktree');
  const place = worktreePlace(main, name);
  if (!paths.includes(place.path))
    throw new ToolError('worktree_not_found', `no worktree ${name} in this repository (.claude/worktrees/${name})`, '/name');
  return place;
}

async function pendingWork(git: GitRunner, place: WorktreePlace): Promise<{ uncommitted: string[]; unreachable: string[] }> {
  const status = await must(git, ['status', '--porcelain', '-z', '--untracked-files=all'], place.path, 'reading its status');
  const uncommitted = status
    .split('\0')
    .filter((entry) => entry.length > 3)
    .map((entry) => entry.slice(3));
  // Commits of the branch that no other branch reaches would be lost with it.
  const commits = await must(
    git,
    ['rev-list', `refs/heads/${place.branch}`, '--not', `--exclude=${place.branch}`, '--branches'],
    place.path,
    'comparing its branch',
  );
  return { uncommitted, unreachable: commits.split('\n').filter((line) => line !== '') };
}

function named(items: readonly string[]): string {
  const shown = items.slice(0, MAX_NAMED_ITEMS).join(', ');
  return items.length > MAX_NAMED_ITEMS ? `${shown} and ${items.length - MAX_NAMED_ITEMS} more` : shown;
}

export async function removeWorktree(git: GitRunner, request: RemoveRequest): Promise<RemovedWorktree> {
  const place = await locate(git, request.cwd, request.name);
  if (request.inUse(place.path))
    throw new ToolError(
      'run_active',
      `a run of this adapter still works in worktree ${request.name}; wait for it to settle or cancel it`,
      '/name',
    );
  const work = await pendingWork(git, place);
  if (!request.force && (work.uncommitted.length > 0 || work.unreachable.length > 0)) {
    const parts = [
      work.uncommitted.length > 0 ? `${work.uncommitted.length} uncommitted file(s) (${named(work.uncommitted)})` : null,
      work.unreachable.length > 0 ? `${work.unreachable.length} commit(s) no other branch reaches` : null,
    ].filter((part): part is string => part !== null);
    throw new ToolError(
      'worktree_has_work',
      `worktree ${request.name} holds ${parts.join(' and ')}; merge or commit what you want to keep, or pass force: true to discard it`,
      '/name',
    );
  }
  const head = await git(['rev-parse', '--verify', '--quiet', `refs/heads/${place.branch}`], place.path);
  // The native locks its worktrees for the session and leaves the lock; the unlock may find none.
  await git(['worktree', 'unlock', place.path], place.repository);
  await must(git, ['worktree', 'remove', ...(request.force ? ['--force'] : []), place.path], place.repository, 'removing the worktree');
  await must(git, ['branch', '-D', place.branch], place.repository, 'deleting its branch');
  return {
    name: place.name,
    path: place.path,
    branch: place.branch,
    head_commit: head.ok ? head.stdout.trim() : null,
    forced: request.force,
    discarded: request.force
      ? { uncommitted_files: work.uncommitted.length, unreachable_commits: work.unreachable.length }
      : { uncommitted_files: 0, unreachable_commits: 0 },
  };
}
