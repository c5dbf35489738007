/**
 * Finds the native binary: --claude-bin, else CLAUDE_BIN, else `claude` on PATH. No shell and no
 * `which`: PATH is walked here, skipping empty and relative entries so the current directory is never
 * searched implicitly. A value containing '/' is a path; a bare name is looked up on PATH (as execvp does).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { ToolError } from '../tool-errors.ts';

export const DEFAULT_NATIVE_NAME = 'claude';
export const NATIVE_BIN_ENV = 'CLAUDE_BIN';

export interface ResolveNativeBinaryInput {
  readonly cliFlag?: string | undefined;
  /** Reads CLAUDE_BIN and PATH only. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Base for a relative --claude-bin/CLAUDE_BIN path; the native process later runs in another cwd. */
  readonly cwd?: string | undefined;
  readonly isExecutable?: ((path: string) => boolean) | undefined;
}

const HINT = `Install @anthropic-ai/claude-code, or point --claude-bin or ${NATIVE_BIN_ENV} at the claude executable.`;

/** Absolute path of an executable native binary, or ToolError('native_not_found') with a hint. */
export function resolveNativeBinary(input: ResolveNativeBinaryInput): string {
  const isExecutable = input.isExecutable ?? isExecutableFile;
  const pathEntries = (input.env['PATH'] ?? '').split(delimiter).filter((entry) => entry !== '' && isAbsolute(entry));
  const explicit: readonly [string, string | undefined][] = [
    ['--claude-bin', input.cliFlag],
    [NATIVE_BIN_ENV, input.env[NATIVE_BIN_ENV]],
  ];
  for (const [source, value] of explicit) {
    if (value === undefined || value === '') continue;
    if (value.includes('\0')) throw new ToolError('native_not_found', `${source} is not a usable path. ${HINT}`);
    if (value.includes('/')) {
      if (!isAbsolute(value) && input.cwd === undefined)
        throw new ToolError('native_not_found', `${source} must be an absolute path here. ${HINT}`);
      const path = resolve(input.cwd ?? '/', value);
      if (isExecutable(path)) return path;
      throw new ToolError('native_not_found', `${source} names ${path}, which is not an executable file. ${HINT}`);
    }
    const found = lookPath(value, pathEntries, isExecutable);
    if (found !== null) return found;
    throw new ToolError('native_not_found', `${source} names ${value}, which was not found as an executable on PATH. ${HINT}`);
  }
  const found = lookPath(DEFAULT_NATIVE_NAME, pathEntries, isExecutable);
  if (found !== null) return found;
  throw new ToolError(
    'native_not_found',
    `No executable "${DEFAULT_NATIVE_NAME}" on PATH (searched ${pathEntries.length} absolute entries). ${HINT}`,
  );
}

function lookPath(name: string, entries: readonly string[], isExecutable: (path: string) => boolean): string | null {
  for (const entry of entries) {
    const candidate = join(entry, name);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

/** A regular file (after symlinks) that this process may execute. */
export function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
