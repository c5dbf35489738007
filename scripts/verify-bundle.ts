/**
 * Audits the single-file bundle: rebuilds it twice into temp folders (byte-identical, equal to the
 * committed bundle.sha256), checks that every input is the project's own and every import a node:
 * builtin, that package.json has no dependency keys, and that the built file serves: it answers
 * initialize, runs claude.run against the fake CLI with confirmed cleanup, and exits on stdin EOF.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundle, BUNDLE_NAME, ROOT } from './build.ts';

const failures: string[] = [];
const check = (ok: boolean, what: string): void => {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
  if (!ok) failures.push(what);
};

const dirA = mkdtempSync(join(tmpdir(), 'crm-bundle-a-'));
const dirB = mkdtempSync(join(tmpdir(), 'crm-bundle-b-'));
try {
  const a = await buildBundle(dirA);
  const b = await buildBundle(dirB);
  check(readFileSync(a.file).equals(readFileSync(b.file)), 'two builds are byte-identical');
  const committed = readFileSync(join(ROOT, 'bundle.sha256'), 'utf8').trim().split(/\s+/)[0];
  check(committed === a.sha256, `sha256 ${a.sha256} equals committed bundle.sha256 (${committed ?? 'missing'})`);

  const inputs = Object.keys(a.metafile.inputs);
  const foreign = inputs.filter((p) => !p.startsWith('lib/') && p !== 'cli-tree.json');
  check(foreign.length === 0, `every input is under lib/ or cli-tree.json (${inputs.length} inputs${foreign.length ? `; foreign: ${foreign.join(', ')}` : ''})`);
  const imports = Object.values(a.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
  const nonBuiltin = imports.filter((p) => !p.startsWith('node:'));
  check(nonBuiltin.length === 0, `every import is node:* (${new Set(imports).size} distinct${nonBuiltin.length ? `; others: ${nonBuiltin.join(', ')}` : ''})`);

  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  const depKeys = ['dependencies', 'optionalDependencies', 'peerDependencies', 'bundledDependencies', 'bundleDependencies'].filter((k) => k in pkg);
  check(depKeys.length === 0, `package.json has no dependency keys${depKeys.length ? ` (found ${depKeys.join(', ')})` : ''}`);

  const text = readFileSync(a.file, 'utf8');
  check(text.startsWith('#!/usr/bin/env node\n'), 'bundle starts with a node shebang');
  check(/^\/\/ lib\/main\.ts$/m.test(text), 'bundle keeps // lib/... region comments');

  await smokeTest(a.file);
} finally {
  rmSync(dirA, { recursive: true, force: true });
  rmSync(dirB, { recursive: true, force: true });
}

if (failures.length > 0) {
  process.stdout.write(`verify-bundle: ${failures.length} check(s) failed\n`);
  process.exit(1);
}
process.stdout.write(`verify-bundle: all checks passed (${BUNDLE_NAME})\n`);

async function smokeTest(bundle: string): Promise<void> {
  const fake = join(ROOT, 'fixtures', 'fake-claude.mjs');
  const child = spawn(process.execPath, [bundle, '--claude-bin', fake], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '', HOME: tmpdir() } });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
  child.stderr.setEncoding('utf8').on('data', (d: string) => { err += d; });
  const waitFor = (id: number): Promise<Record<string, unknown>> => new Promise((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`no response ${id}; stderr: ${err.slice(-500)}`)), 30_000);
    const poll = setInterval(() => {
      for (const line of out.split('\n')) {
        if (!line) continue;
        const msg = JSON.parse(line) as Record<string, unknown>;
        if (msg['id'] === id) { clearInterval(poll); clearTimeout(deadline); resolve(msg); return; }
      }
    }, 10);
  });
  const send = (msg: unknown): void => { child.stdin.write(`${JSON.stringify(msg)}\n`); };
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'verify', version: '0' } } });
  const init = await waitFor(1);
  check((init['result'] as Record<string, unknown> | undefined)?.['protocolVersion'] === '2025-06-18', 'bundle answers initialize with the requested supported date');
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'claude.run', arguments: { prompt: 'say hi', cwd: tmpdir() } } });
  const run = await waitFor(2);
  const structured = ((run['result'] as Record<string, unknown> | undefined)?.['structuredContent'] as Record<string, unknown> | undefined)?.['result'] as Record<string, unknown> | undefined;
  check(structured?.['is_error'] === false && structured['cleanup_confirmed'] === true, 'bundle runs claude.run against the fake CLI with confirmed cleanup');
  const started = Date.now();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.stdin.end();
  const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 5000).unref())]);
  if (code === 'hung') child.kill('SIGKILL');
  check(code === 0, `bundle exits 0 on stdin EOF (${code === 'hung' ? 'did not exit within 5 s' : `${Date.now() - started} ms`})`);
}
