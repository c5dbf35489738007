/**
 * Where the per-user state directory is, and what its entries are called. Pure: the platform comes from the
 * server's one platform decision (lib/process/platform.ts), the environment and home directory are handed in.
 */
import { isAbsolute, join } from 'node:path';
import type { SupportedPlatform } from '../process/platform.ts';
import { isRunId } from '../runs/ids.ts';

/** The product's folder under the platform's state base. */
export const STATE_DIR_NAME = 'claude-run-mcp';
const RECORD_PREFIX = 'run-';
const RECORD_SUFFIX = '.json';
/** A record being written: created exclusively under this prefix, then renamed onto its name. */
export const TEMP_PREFIX = '.tmp-';

/**
 * The default state directory: on Linux `$XDG_STATE_HOME` (only when absolute, as the XDG specification says)
 * or `~/.local/state`; on macOS `~/Library/Application Support`; then `claude-run-mcp`. Null without an
 * absolute home directory (nothing sensible to name).
 */
export function defaultStateDir(
  platform: SupportedPlatform,
  env: Readonly<Record<string, string | undefined>>,
  home: string,
): string | null {
  if (platform === 'linux') {
    const xdg = env['XDG_STATE_HOME'];
    if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return join(xdg, STATE_DIR_NAME);
  }
  if (home === '' || !isAbsolute(home)) return null;
  const base = platform === 'linux' ? join(home, '.local', 'state') : join(home, 'Library', 'Application Support');
  return join(base, STATE_DIR_NAME);
}

/** The file name of a run's record. */
export function recordName(runId: string): string {
  return `${RECORD_PREFIX}${runId}${RECORD_SUFFIX}`;
}

/** What an entry of the state directory is by its name: a record (of which run), a temp file, or not ours. */
export type EntryKind = { readonly kind: 'record'; readonly runId: string } | { readonly kind: 'temp' } | { readonly kind: 'foreign' };

export function entryKind(name: string): EntryKind {
  if (name.startsWith(TEMP_PREFIX) && /^\.tmp-[0-9a-f]{16}$/.test(name)) return { kind: 'temp' };
  if (name.startsWith(RECORD_PREFIX) && name.endsWith(RECORD_SUFFIX)) {
    const runId = name.slice(RECORD_PREFIX.length, -RECORD_SUFFIX.length);
    if (isRunId(runId)) return { kind: 'record', runId };
  }
  return { kind: 'foreign' };
}
