/**
 * Builds the audited single-file bundle: one ESM file with a shebang, importing only node: builtins,
 * unminified, with `// lib/...` region comments. Byte-reproducible for a given esbuild version.
 * Usage: node --import tsx scripts/build.ts [--outdir DIR]
 */
import { build, type Metafile } from 'esbuild';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BUNDLE_NAME = 'claude-run-mcp.mjs';

export async function buildBundle(outdir: string): Promise<{ file: string; sha256: string; metafile: Metafile }> {
  mkdirSync(outdir, { recursive: true });
  const file = join(outdir, BUNDLE_NAME);
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ['lib/main.ts'],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: false,
    legalComments: 'none',
    charset: 'utf8',
    packages: 'external',
    banner: { js: '#!/usr/bin/env node' },
    metafile: true,
    logLevel: 'warning',
  });
  chmodSync(file, 0o755);
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
  return { file, sha256, metafile: result.metafile };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const i = process.argv.indexOf('--outdir');
  const outdir = i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : join(ROOT, 'dist');
  const { file, sha256 } = await buildBundle(outdir);
  process.stdout.write(`${sha256}  ${BUNDLE_NAME}\n`);
  process.stderr.write(`built ${file}\n`);
}
