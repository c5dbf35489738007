// Which spec files cover a set of changed paths, by the mirror rule of spec/README.md: the spec of
// lib/X/Y.ts is spec/X/Y.test.ts or spec/X/Y.<aspect>[.<tier>].test.ts; fixtures/ and scripts/ are mirrored
// under spec/fixtures/ and spec/scripts/. A changed spec file covers itself; a changed spec helper (a .ts under
// spec/ that is not a test) is covered by the spec files that name it in an import.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/** The prefix a mirrored spec's path starts with, or null for a path outside the mirror (docs, package files). */
export function mirrorPrefix(path) {
  const bare = path.replace(/\.(ts|mjs|js)$/, '');
  if (bare === path) return null;
  if (path.startsWith('lib/')) return `spec/${bare.slice('lib/'.length)}.`;
  if (path.startsWith('fixtures/') || path.startsWith('scripts/')) return `spec/${bare}.`;
  return null;
}

/**
 * The spec files (of `specFiles`, repository-relative) that cover `paths`; `readText` reads a spec file
 * (for the helper rule). Order follows `specFiles`.
 */
export function specsCovering(paths, specFiles, readText) {
  const chosen = new Set();
  for (const path of paths) {
    if (specFiles.includes(path)) chosen.add(path);
    const prefix = mirrorPrefix(path);
    if (prefix !== null) for (const f of specFiles) if (f.startsWith(prefix)) chosen.add(f);
    if (path.startsWith('spec/') && path.endsWith('.ts') && !path.endsWith('.test.ts')) {
      const imported = `/${basename(path)}'`;
      for (const f of specFiles) if (readText(f).includes(imported)) chosen.add(f);
    }
  }
  return specFiles.filter((f) => chosen.has(f));
}

/** Paths changed against HEAD in the work tree (staged or not) and untracked ones, repository-relative. */
export function changedPaths(root) {
  const git = (args) => {
    const out = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
    if (out.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${out.stderr.trim()}`);
    return out.stdout.split('\n').filter((line) => line !== '');
  };
  return [...new Set([...git(['diff', '--name-only', 'HEAD']), ...git(['ls-files', '--others', '--exclude-standard'])])];
}

export const readSpecText = (root) => (file) => readFileSync(join(root, file), 'utf8');
