/**
 * Where the native CLI keeps transcripts (measured on 2.1.332): <config>/projects/<encoded realpath>/<id>.jsonl,
 * <config> = $CLAUDE_CONFIG_DIR or ~/.claude. Used only to tell honestly whether --continue really continued.
 */
import { join } from 'node:path';

const MAX_ENCODED_CHARS = 200;

/** The CLI's project folder name for a real path (non-alphanumeric UTF-16 units become '-'). */
export function encodeProjectPath(realPath: string): string {
  const encoded = realPath.replace(/[^a-zA-Z0-9]/g, '-');
  if (encoded.length <= MAX_ENCODED_CHARS) return encoded;
  let hash = 0;
  for (let i = 0; i < realPath.length; i++) hash = ((hash << 5) - hash + realPath.charCodeAt(i)) | 0;
  return `${encoded.slice(0, MAX_ENCODED_CHARS)}-${Math.abs(hash).toString(36)}`;
}

export function getProjectDir(env: Readonly<Record<string, string | undefined>>, realCwd: string): string | null {
  const configDir = env['CLAUDE_CONFIG_DIR'] || (env['HOME'] ? join(env['HOME'], '.claude') : null);
  return configDir === null ? null : join(configDir, 'projects', encodeProjectPath(realCwd));
}

/** The two file-system reads listTranscriptIds needs; `mtimeMs` gives null for a file it cannot stat. */
export interface TranscriptDirReader {
  readonly names: (dir: string) => readonly string[];
  readonly mtimeMs: (path: string) => number | null;
}

/**
 * Session ids of a project folder's transcripts, newest first. A transcript that vanishes (or cannot be
 * read) between the listing and its stat is left out alone: the others stay, so a --continue check still
 * compares against every id that was there.
 */
export function listTranscriptIds(dir: string, fs: TranscriptDirReader): string[] {
  const found: { readonly id: string; readonly mtime: number }[] = [];
  for (const name of fs.names(dir)) {
    if (!name.endsWith('.jsonl')) continue;
    const mtime = fs.mtimeMs(join(dir, name));
    if (mtime !== null) found.push({ id: name.slice(0, -'.jsonl'.length), mtime });
  }
  return found.sort((a, b) => b.mtime - a.mtime).map((entry) => entry.id);
}
