// One audited file for every face: the bin, the supervisor role, `require('claude-run-mcp')` and
// `import … from 'claude-run-mcp'` all run dist/claude-run-mcp.cjs, the file bundle.sha256 hashes. The ES module
// face beside it is a few lines of names with no code of its own. Built fresh into a temporary folder.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildLibrary, BUNDLE_NAME, LIBRARY_NAME } from '../../scripts/build.ts';
import { specBundle } from '../helpers/bundle.ts';
import { FAKE_CLAUDE } from '../helpers/tool-harness.ts';
import { parseObj } from '../helpers/typed-results.ts';

/** The face holds names, not code: far below any lib/ module. */
const MAX_FACE_BYTES = 2048;
/** Deadline of a child process this spec starts (a claude.run against the fake CLI takes well under a second). */
const CHILD_DEADLINE_MS = 30_000;

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-one-file-')));
const bundle = join(dir, BUNDLE_NAME);
const face = join(dir, LIBRARY_NAME);
before(async () => {
  // The run's bundle (a fresh build's bytes plus a source map line), beside a fresh face, as dist/ holds them.
  copyFileSync(await specBundle(), bundle);
  await buildLibrary(dir);
});
after(() => rmSync(dir, { recursive: true, force: true }));

function runNode(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node ${args.join(' ')} did not exit within ${CHILD_DEADLINE_MS} ms`));
    }, CHILD_DEADLINE_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('one audited file for every face', () => {
  it(`the ES module face is under ${MAX_FACE_BYTES} bytes of names: one require of the bundle beside it, no code`, () => {
    const text = readFileSync(face, 'utf8');
    assert.ok(Buffer.byteLength(text) < MAX_FACE_BYTES, `${Buffer.byteLength(text)} bytes`);
    const shapes = [
      /^\/\/ /,
      /^import \{ createRequire \} from 'node:module';$/,
      new RegExp(`^const library = createRequire\\(import\\.meta\\.url\\)\\('\\./${BUNDLE_NAME.replace('.', '\\.')}'\\);$`),
      /^export const \{$/,
      /^ {2}[A-Za-z_$][\w$]*,$/,
      /^\} = library;$/,
      /^$/,
    ];
    const other = text.split('\n').filter((line) => !shapes.some((shape) => shape.test(line)));
    assert.deepEqual(other, [], 'every line is a comment, the one import, the one require, or a name');
  });

  it('require() of the bundle and import of the face give the very objects lib/npm-entry.ts exports, by the same names', async () => {
    const required = createRequire(import.meta.url)(bundle) as Record<string, unknown>;
    const imported = (await import(pathToFileURL(face).href)) as Record<string, unknown>;
    const source = await import('../../lib/npm-entry.ts');
    const names = Object.keys(source).sort();
    assert.deepEqual(Object.keys(required).sort(), names);
    assert.deepEqual(Object.keys(imported).sort(), names);
    for (const name of names) assert.equal(imported[name], required[name], `${name}: the face re-exports the bundle's own value`);
    assert.equal(typeof required['createClaudeRunAdapter'], 'function');
    const command = (required['getPackagedSupervisorCommand'] as () => { args: string[] } | null)();
    assert.deepEqual(command?.args, [bundle, '__supervisor'], 'the library starts its supervisors from this same file');
  });

  it('required as a module the bundle runs no role, even when the process argv names one', async () => {
    writeFileSync(join(dir, 'requires.cjs'), `require(${JSON.stringify(bundle)}); process.stdout.write('loaded');\n`);
    const loaded = await runNode(['requires.cjs', '__supervisor']);
    assert.deepEqual([loaded.code, loaded.stdout, loaded.stderr], [0, 'loaded', '']);
  });

  it('import of the face runs one claude.run in-process, supervised by the bundle (a second face of the same file)', async () => {
    writeFileSync(join(dir, 'imports.mjs'), CONSUMER);
    const out = await runNode(['imports.mjs', face, FAKE_CLAUDE]);
    assert.equal(out.code, 0, out.stderr);
    const result = parseObj(out.stdout, "the consumer's report");
    assert.equal(result['is_error'], false, JSON.stringify(result['error']));
    assert.equal(result['cleanup_confirmed'], true);
  });
});

const CONSUMER = `import { realpathSync } from 'node:fs';
const [entry, claudeBin] = process.argv.slice(2);
const { createClaudeRunAdapter } = await import(entry);
const cwd = realpathSync('.');
const adapter = createClaudeRunAdapter({ claudeBin, cwd, env: { PATH: process.env.PATH, HOME: cwd } });
await adapter.handle({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'consumer', version: '1' } } });
const response = await adapter.handle({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'claude.run', arguments: { prompt: 'say hi', cwd } } });
await adapter.close();
process.stdout.write(JSON.stringify(response.result.structuredContent.result));
`;
