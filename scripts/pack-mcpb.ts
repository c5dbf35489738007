/**
 * Builds the MCP Bundle (.mcpb, what Claude Desktop installs with one click): manifest.json, README.md and
 * the audited single-file bundle at dist/claude-run-mcp.cjs (the path manifest.json's entry_point names),
 * zipped by the official `mcpb pack` (@anthropic-ai/mcpb, a pinned devDependency). Refuses when the fresh
 * build differs from the committed bundle.sha256, so a .mcpb always carries the audited bytes.
 *
 * Usage: node --import tsx scripts/pack-mcpb.ts [OUTFILE]   (npm run pack:mcpb)
 *   default OUTFILE: dist/claude-run-mcp-<version>.mcpb
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBundle, METAFILE_NAME, readCommittedHash, ROOT } from './build.ts';

export const MCPB_CLI = join(ROOT, 'node_modules', '@anthropic-ai', 'mcpb', 'dist', 'cli', 'cli.js');
/** What the .mcpb holds besides the bundle: the manifest and the README it points users to. */
const STAGED_FILES = ['manifest.json', 'README.md'] as const;

export interface PackedMcpb {
  readonly file: string;
  readonly bundleSha256: string;
}

export async function packMcpb(outFile: string): Promise<PackedMcpb> {
  const stage = mkdtempSync(join(tmpdir(), 'crm-mcpb-'));
  try {
    for (const name of STAGED_FILES) copyFileSync(join(ROOT, name), join(stage, name));
    const built = await buildBundle(join(stage, 'dist'));
    rmSync(join(stage, 'dist', METAFILE_NAME));
    const committed = readCommittedHash();
    if (built.sha256 !== committed) {
      throw new Error(
        `the fresh bundle (${built.sha256}) differs from bundle.sha256 (${committed ?? 'missing'}): run \`npm run build\` and commit bundle.sha256 first`,
      );
    }
    // No shell: node runs the mcpb CLI with an argument vector.
    execFileSync(process.execPath, [MCPB_CLI, 'pack', stage, outFile], { stdio: ['ignore', 'ignore', 'inherit'] });
    return { file: outFile, bundleSha256: built.sha256 };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const out = resolve(process.argv[2] ?? join(ROOT, 'dist', `claude-run-mcp-${version}.mcpb`));
  const packed = await packMcpb(out);
  process.stdout.write(`${packed.file}\n`);
}
