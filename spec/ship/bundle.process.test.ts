// The single-file bundle: two fresh builds are reproducible, only lib/ inputs and node: imports, and it serves
// (shebang exec, initialize, claude.run through the bundle's own supervisor role, exit on stdin EOF; the run's
// spec bundle, whose bytes are a fresh build's plus a source map line).
// The committed-hash comparison is `npm run verify:bundle` (CI), because every lib/ change moves the hash.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundle, readCommittedHash, ROOT, type BuiltBundle } from '../../scripts/build.ts';
import { auditBuild, smokeTest, type Check } from '../../scripts/verify-bundle.ts';
import { parseObj } from '../helpers/typed-results.ts';
import { specBundle } from '../helpers/bundle.ts';

const failed = (checks: readonly Check[]): string[] => checks.filter((c) => !c.ok).map((c) => c.what);

/** Fresh builds of this file, removed after it; the first is reused by the audit's negative test. */
const buildDirs: string[] = [];
let firstBuild: BuiltBundle | undefined;
after(() => {
  for (const dir of buildDirs) rmSync(dir, { recursive: true, force: true });
});
async function freshBuild(): Promise<BuiltBundle> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-ship-'));
  buildDirs.push(dir);
  return buildBundle(dir);
}

test('two builds are byte-identical and pass the static audit', async () => {
  const a = await freshBuild();
  const b = await freshBuild();
  firstBuild = a;
  assert.equal(a.sha256, b.sha256);
  assert.ok(readFileSync(a.file).equals(readFileSync(b.file)));
  const checks = auditBuild(a, parseObj(readFileSync(join(ROOT, 'package.json'), 'utf8'), 'package.json'));
  assert.equal(checks.length, 5);
  assert.deepEqual(failed(checks), []);
});

test('the audit fails a bundle with a foreign input or a non-node import, and a package.json with dependencies', async () => {
  const built = firstBuild ?? (await freshBuild());
  const metafile = structuredClone(built.metafile);
  metafile.inputs['node_modules/x/index.js'] = { bytes: 1, imports: [] };
  const output = Object.values(metafile.outputs)[0];
  assert.ok(output);
  output.imports.push({ path: 'left-pad', kind: 'import-statement', external: true });
  const checks = auditBuild({ ...built, metafile }, { dependencies: {} });
  const failures = failed(checks);
  assert.equal(failures.length, 4, failures.join('\n'));
  assert.match(failures.join('\n'), /foreign: node_modules\/x\/index\.js/);
  assert.match(failures.join('\n'), /others: left-pad/);
  assert.match(failures.join('\n'), /found dependencies/);
});

test('the built bundle serves claude.run through its own supervisor role and exits on stdin EOF', async () => {
  const checks = await smokeTest(await specBundle());
  assert.ok(checks.length >= 9, checks.map((c) => c.what).join('\n'));
  assert.deepEqual(failed(checks), []);
});

test('bundle.sha256 is one well-formed sha256sum line for the bundle', () => {
  assert.match(readCommittedHash() ?? 'missing', /^[0-9a-f]{64}$/);
});
