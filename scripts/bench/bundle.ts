/** The bundle the benchmarks and the soak run: dist/ when it is newer than every lib/ source, else a fresh temp build. */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLE_NAME, buildBundle, ROOT } from '../build.ts';

function newestSourceMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSourceMs(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export async function ensureBundle(tempDir: string, log: (line: string) => void): Promise<string> {
  const dist = join(ROOT, 'dist', BUNDLE_NAME);
  if (existsSync(dist) && statSync(dist).mtimeMs >= newestSourceMs(join(ROOT, 'lib'))) return dist;
  log(
    existsSync(dist)
      ? 'dist/ bundle is older than lib/: building a fresh one into a temp dir'
      : 'no dist/ bundle: building one into a temp dir',
  );
  return (await buildBundle(join(tempDir, 'dist'))).file;
}
