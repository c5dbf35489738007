// The single-file bundle, built fresh: reproducible, only lib/ inputs and node: imports, and it serves
// (shebang exec, initialize, claude.run through the bundle's own supervisor role, exit on stdin EOF).
// The committed-hash comparison is `npm run verify:bundle` (CI), because every lib/ change moves the hash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundle, readCommittedHash, ROOT } from '../../scripts/build.ts';
import { auditBuild, smokeTest, type Check } from '../../scripts/verify-bundle.ts';
import { parseObj } from '../helpers/typed-results.ts';

const failed = (checks: readonly Check[]): string[] => checks.filter((c) => !c.ok).map((c) => c.what);

test('two builds are byte-identical and pass the static audit', async () => {
  const dirA = mkdtempSync(join(tmpdir(), 'crm-ship-a-'));
  const dirB = mkdtempSync(join(tmpdir(), 'crm-ship-b-'));
  try {
    const a = await buildBundle(dirA);
    const b = await buildBundle(dirB);
    assert.equal(a.sha256, b.sha256);
    assert.ok(readFileSync(a.file).equals(readFileSync(b.file)));
    const checks = auditBuild(a, parseObj(readFileSync(join(ROOT, 'package.json'), 'utf8'), 'package.json'));
    assert.equal(checks.length, 5);
    assert.deepEqual(failed(checks), []);
  } finally {
    rmSync(dirA, { recursive: true, force: true });
    rmSync(dirB, { recursive: true, force: true });
  }
});

test('the audit fails a bundle with a foreign input or a non-node import, and a package.json with dependencies', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-ship-c-'));
  try {
    const built = await buildBundle(dir);
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
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the built bundle serves claude.run through its own supervisor role and exits on stdin EOF', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-ship-d-'));
  try {
    const built = await buildBundle(dir);
    const checks = await smokeTest(built.file);
    assert.ok(checks.length >= 9, checks.map((c) => c.what).join('\n'));
    assert.deepEqual(failed(checks), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bundle.sha256 is one well-formed sha256sum line for the bundle', () => {
  assert.match(readCommittedHash() ?? 'missing', /^[0-9a-f]{64}$/);
});
