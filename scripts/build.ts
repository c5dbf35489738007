/**
 * Builds the audited single-file bundle: one CommonJS file with a shebang, requiring only node: builtins,
 * unminified, with `// lib/...` region comments. Byte-reproducible for a given esbuild version.
 * CommonJS because it starts faster: Node's ESM loader alone costs an empty .mjs file ~6 ms more than an
 * empty .cjs, a fifth of `node -e 0` (docs/benchmarks.md, cold start).
 * The bundle is also the npm package's library: required as a module it exports lib/npm-entry.ts (lib/main.ts).
 * Beside it, dist/index.mjs is the library's ES module face: a few lines that require the bundle and export
 * its names, no code of its own, so bundle.sha256 covers everything the package runs. The declarations go
 * to dist/types/ (tsc with tsconfig.types.json).
 *
 * Usage: node --import tsx scripts/build.ts [--outdir DIR | --no-hash]
 *   default: writes dist/ (bundle, metafile, library entry, declarations) and the committed bundle.sha256
 *   --no-hash: writes dist/ only; `npm pack` runs this (prepack), so packing never rewrites bundle.sha256
 *   --outdir DIR: writes the bundle and metafile into DIR only (bundle.sha256 is left alone)
 */
import { build, version as ESBUILD_VERSION, type BuildOptions, type Metafile } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BUNDLE_NAME = 'claude-run-mcp.cjs';
export const METAFILE_NAME = 'claude-run-mcp.meta.json';
export const HASH_FILE = join(ROOT, 'bundle.sha256');
export const SHEBANG = '#!/usr/bin/env node';
export const LIBRARY_NAME = 'index.mjs';
export const TYPES_DIR = 'types';
export { ESBUILD_VERSION };

/**
 * The one name the CommonJS bundle gives `import.meta` (lib/ is ES modules: from source and in the library
 * entry the real one applies). The banner defines it with `url` only, from __filename, which Node has already
 * resolved through symlinks as it does for an ES module's URL; lib/ calls import.meta.resolve only from source.
 * A getter, so that the serve role, which never reads it before `initialize` is answered, does not load node:url.
 */
export const IMPORT_META = '__claude_run_mcp_import_meta';
/** The bundle's first lines: the shebang, strict mode (an ES module always had it), then its own import.meta. */
export const BANNER = `${SHEBANG}\n'use strict';\nconst ${IMPORT_META} = { get url() { return require('node:url').pathToFileURL(__filename).href; } };`;

/** Every option that shapes the output bytes, in one place (docs/AUDIT.md repeats them). */
export const BUILD_OPTIONS = {
  absWorkingDir: ROOT,
  entryPoints: ['lib/main.ts'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: false,
  legalComments: 'none',
  charset: 'utf8',
  // Anything that is not a relative import stays an import; verify-bundle then proves all are node:*.
  packages: 'external',
  banner: { js: BANNER },
  define: { 'import.meta': IMPORT_META },
  metafile: true,
  logLevel: 'warning',
} as const satisfies BuildOptions;

export interface BuiltBundle {
  readonly file: string;
  readonly sha256: string;
  readonly bytes: number;
  readonly metafile: Metafile;
}

export async function buildBundle(outdir: string): Promise<BuiltBundle> {
  mkdirSync(outdir, { recursive: true });
  const file = join(outdir, BUNDLE_NAME);
  const result = await build({ ...BUILD_OPTIONS, outfile: file });
  chmodSync(file, 0o755);
  writeFileSync(join(outdir, METAFILE_NAME), `${JSON.stringify(result.metafile, null, 2)}\n`);
  const content = readFileSync(file);
  return { file, sha256: createHash('sha256').update(content).digest('hex'), bytes: content.length, metafile: result.metafile };
}

/** The names lib/npm-entry.ts exports, as esbuild reads them (an ES module build kept in memory). */
export async function getLibraryExportNames(): Promise<string[]> {
  const { banner: _banner, define: _define, ...options } = BUILD_OPTIONS;
  const result = await build({
    ...options,
    format: 'esm',
    entryPoints: ['lib/npm-entry.ts'],
    outfile: join(ROOT, 'dist', LIBRARY_NAME),
    write: false,
  });
  const outputs = Object.values(result.metafile.outputs);
  if (outputs.length !== 1 || outputs[0] === undefined)
    throw new Error(`build: expected one output for the library entry, got ${outputs.length}`);
  return [...outputs[0].exports].sort();
}

/** The ES module face: requires the bundle beside it and exports these names of it. Nothing else. */
export function formatLibraryFace(names: readonly string[]): string {
  return [
    '// claude-run-mcp for `import`: the library API of the audited bundle beside this file (claude-run-mcp.cjs,',
    '// the file bundle.sha256 hashes). No code of its own; written by scripts/build.ts.',
    "import { createRequire } from 'node:module';",
    '',
    `const library = createRequire(import.meta.url)('./${BUNDLE_NAME}');`,
    '',
    'export const {',
    ...names.map((name) => `  ${name},`),
    '} = library;',
    '',
  ].join('\n');
}

/** dist/index.mjs: the ES module face over the bundle (which must sit in the same folder). */
export async function buildLibrary(outdir: string): Promise<string> {
  mkdirSync(outdir, { recursive: true });
  const file = join(outdir, LIBRARY_NAME);
  writeFileSync(file, formatLibraryFace(await getLibraryExportNames()));
  return file;
}

/** Declarations of the library entry and everything it exports, into <outdir>/types (replaced whole). */
export function buildDeclarations(outdir: string): string {
  const typesDir = join(outdir, TYPES_DIR);
  rmSync(typesDir, { recursive: true, force: true });
  // No shell: node runs TypeScript's own launcher with an argument vector.
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.types.json'), '--outDir', typesDir],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  return typesDir;
}

/** The line bundle.sha256 holds: the `sha256sum` format, so `cd dist && sha256sum -c ../bundle.sha256` works. */
export function formatHashLine(sha256: string): string {
  return `${sha256}  ${BUNDLE_NAME}\n`;
}

/** The committed hash, or null when the file is missing or malformed. */
export function readCommittedHash(path: string = HASH_FILE): string | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  const match = /^([0-9a-f]{64}) {2}(\S+)\n$/.exec(text);
  return match !== null && match[2] === BUNDLE_NAME ? (match[1] ?? null) : null;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const i = process.argv.indexOf('--outdir');
  const custom = i >= 0 ? process.argv[i + 1] : undefined;
  if (i >= 0 && custom === undefined) {
    process.stderr.write('build: --outdir needs a directory\n');
    process.exit(2);
  }
  const writeHash = custom === undefined && !process.argv.includes('--no-hash');
  const outdir = custom ?? join(ROOT, 'dist');
  const built = await buildBundle(outdir);
  if (writeHash) writeFileSync(HASH_FILE, formatHashLine(built.sha256));
  process.stdout.write(formatHashLine(built.sha256));
  process.stderr.write(
    `built ${built.file} (${built.bytes} bytes, ${Object.keys(built.metafile.inputs).length} inputs, esbuild ${ESBUILD_VERSION}, node ${process.version})` +
      `${writeHash ? '; wrote bundle.sha256' : ''}\n`,
  );
  if (custom === undefined) {
    const library = await buildLibrary(outdir);
    const types = buildDeclarations(outdir);
    process.stderr.write(`built ${library} and ${types}/\n`);
  }
}
