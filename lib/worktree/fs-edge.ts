/** The file-system and probe edges of worktree reading, wired by the composition (lib/tools/providers.ts). */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { GitRunnerSync } from './git.ts';

/** An untracked file is counted only up to this size; a larger one reports null lines. */
export const MAX_COUNTED_FILE_BYTES = 1024 * 1024;

/**
 * Opened without following a symlink (whose target may lie outside the worktree) and without waiting (a FIFO
 * would block a thread of the pool until someone writes to it); only the regular file this opened is read.
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Newline-terminated lines (plus a last unterminated one) of a regular text file; null when it is binary, too
 * large, unreadable, a symlink or not a regular file (a FIFO, socket or device).
 */
export async function countFileLines(path: string): Promise<number | null> {
  let handle;
  try {
    handle = await open(path, OPEN_FLAGS);
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > MAX_COUNTED_FILE_BYTES) return null;
    const size = stat.size;
    const buffer = Buffer.alloc(size);
    const { bytesRead } = await handle.read(buffer, 0, size, 0);
    const bytes = buffer.subarray(0, bytesRead);
    if (bytes.includes(0)) return null; // git's own test for binary content
    let lines = 0;
    for (const byte of bytes) if (byte === 0x0a) lines += 1;
    return bytesRead > 0 && bytes[bytesRead - 1] !== 0x0a ? lines + 1 : lines;
  } catch {
    return null;
  } finally {
    await handle?.close();
  }
}

export type GitAvailability = { available: boolean; git_version: string | null; reason: string | null };

/** Whether worktree isolation can be offered: git found, and its version. */
export function describeGit(git: GitRunnerSync, cwd: string): GitAvailability {
  const out = git(['--version'], cwd);
  const version = out.ok ? (/git version (\S+)/.exec(out.stdout)?.[1] ?? null) : null;
  return out.ok && version !== null
    ? { available: true, git_version: version, reason: null }
    : { available: false, git_version: null, reason: out.ok ? 'git --version printed no version' : out.code };
}
