/**
 * The spec bundle: one build of lib/ per suite run, shared by every spec that needs the single-file bundle and
 * by the specs that start servers and supervisors (from the bundle they start about three times faster than
 * from source under tsx). The runner builds it once and names it in CLAUDE_RUN_MCP_SPEC_BUNDLE; a file run on
 * its own builds it here instead, into a cache folder keyed by a hash of the inputs, so a second run reuses it.
 *
 * The bytes are the production bundle's (scripts/build.ts's options) plus one trailing sourceMappingURL line:
 * c8 follows it from the bundle's coverage back to lib/, so what runs from the bundle still counts for lib/.
 * dist/ and bundle.sha256 are never touched.
 */
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { BUILD_OPTIONS, BUNDLE_NAME, ESBUILD_VERSION, METAFILE_NAME, ROOT } from '../../scripts/build.ts';
import type { SupervisorCommand } from '../../lib/supervisor/parent/supervisor-command.ts';

/** Names the built spec bundle (an absolute path); set by scripts/run-specs.mjs for every spec file. */
export const SPEC_BUNDLE_ENV = 'CLAUDE_RUN_MCP_SPEC_BUNDLE';
/** Cache folders older than this are removed when a new one is built (a run in progress is far younger). */
const STALE_CACHE_AGE_MS = 24 * 60 * 60 * 1000;
const CACHE_DIR = join(ROOT, '.cache', 'spec-bundle');
/** What the bundle is built from: a change to any of these is a new bundle. */
const INPUTS = ['lib', 'cli-tree.json', 'scripts/build.ts', 'spec/helpers/bundle.ts'];

function listFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => listFiles(join(path, name)));
}

/** A hash of every input file's path and bytes, and of the esbuild version. */
export function specBundleKey(): string {
  const hash = createHash('sha256').update(`esbuild ${ESBUILD_VERSION}\0`);
  for (const file of INPUTS.flatMap((input) => listFiles(join(ROOT, input)))) {
    hash
      .update(`${relative(ROOT, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Builds the spec bundle into a fresh folder beside the cache entry, then renames the folder into place:
 * concurrent builders never see a half-written bundle, and the loser of a rename race uses the winner's.
 * Sibling folders keep the source map's relative paths (../../../lib/...) valid after the rename.
 */
async function buildInto(target: string): Promise<void> {
  mkdirSync(CACHE_DIR, { recursive: true });
  const temp = join(CACHE_DIR, `.building-${process.pid}-${Date.now()}`);
  mkdirSync(temp);
  try {
    const file = join(temp, BUNDLE_NAME);
    // 'external' writes the map without a comment, so the bundle bytes are the production bundle's.
    const result = await build({ ...BUILD_OPTIONS, outfile: file, sourcemap: 'external', logLevel: 'error' });
    appendFileSync(file, `//# sourceMappingURL=${BUNDLE_NAME}.map\n`);
    chmodSync(file, 0o755);
    writeFileSync(join(temp, METAFILE_NAME), `${JSON.stringify(result.metafile, null, 2)}\n`);
    try {
      renameSync(temp, target);
    } catch (error) {
      if (!existsSync(join(target, BUNDLE_NAME))) throw error;
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  pruneStale(target);
}

function pruneStale(keep: string): void {
  const now = Date.now();
  for (const name of readdirSync(CACHE_DIR)) {
    const path = join(CACHE_DIR, name);
    if (path !== keep && now - statSync(path).mtimeMs > STALE_CACHE_AGE_MS) rmSync(path, { recursive: true, force: true });
  }
}

/** The bundle the runner built, when it names one that exists. */
export function runnerBundle(): string | null {
  const named = process.env[SPEC_BUNDLE_ENV];
  return named !== undefined && named !== '' && existsSync(named) ? named : null;
}

/** The spec bundle's path: the runner's, else the cached build of the current inputs (built now if missing). */
export async function specBundle(): Promise<string> {
  const named = runnerBundle();
  if (named !== null) return named;
  const target = join(CACHE_DIR, specBundleKey());
  if (!existsSync(join(target, BUNDLE_NAME))) await buildInto(target);
  return join(target, BUNDLE_NAME);
}

/** The metafile written beside a spec bundle. */
export function specBundleMetafile(bundle: string): unknown {
  return JSON.parse(readFileSync(join(bundle, '..', METAFILE_NAME), 'utf8'));
}

/**
 * Node arguments that start the server, absolute so any cwd works: the runner's bundle when there is one, else
 * lib/main.ts under tsx (a file run on its own with `node --import tsx --test`).
 */
export function serverNodeArgs(): string[] {
  const bundle = runnerBundle();
  return bundle === null ? ['--import', import.meta.resolve('tsx'), join(ROOT, 'lib', 'main.ts')] : [bundle];
}

/** The supervisor command for in-process adapters: the runner's bundle's role, else the default (from source). */
export function specSupervisorCommand(): SupervisorCommand | undefined {
  const bundle = runnerBundle();
  return bundle === null ? undefined : { file: process.execPath, args: [bundle, '__supervisor'] };
}

/** `supervision` options naming the bundle's supervisor when the runner built one (spread into a host config). */
export function specSupervision(): { supervisorCommand?: SupervisorCommand } {
  const command = specSupervisorCommand();
  return command === undefined ? {} : { supervisorCommand: command };
}
