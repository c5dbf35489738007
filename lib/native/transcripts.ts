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
