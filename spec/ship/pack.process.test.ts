// The npm package as a user gets it: a copy of the checkout without dist/ is packed with `npm pack` (its
// prepack builds), the tarball is installed with `npm install --offline` into an empty project, and the
// installed package is used the ways the README says: `npx claude-run-mcp --help`, a full MCP session
// through the installed bin against the fake CLI, `print`, `check`, a plain-Node `import` and a `require` that
// each run one tool call in-process (both on the audited bundle), and a TypeScript consumer type-checked
// against the shipped declarations.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE_NAME, readCommittedHash, ROOT } from '../../scripts/build.ts';
import { smokeTest } from '../../scripts/verify-bundle.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import { TOOL_NAMES } from '../../lib/tools/declarations.ts';
import { startFakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import { createNativeSandbox, pollUntilGone } from '../helpers/native-env.ts';
import { arr, at, jsonLines, objAt, objs, parseObj, str } from '../helpers/typed-results.ts';

/** The ES module face is a list of names (spec/ship/one-file.process.test.ts): far below any code. */
const MAX_FACE_BYTES = 2048;
/** How long the server started by Claude Code may take to go after Claude Code exited (it signals, then kills). */
const SERVER_GONE_MS = 5_000;
import { ADAPTER_VERSION } from '../../lib/version.ts';

const FAKE_CLAUDE = join(ROOT, 'fixtures', 'fake-claude.mjs');
const REAL_CLAUDE = join(ROOT, 'node_modules', '.bin', 'claude');
/** Hard deadline of each command this spec starts (npm pack includes a full build). */
const COMMAND_DEADLINE_MS = 90_000;
/** Top-level entries of the checkout that are not source: the copy leaves them out. */
const NOT_SOURCE = new Set(['node_modules', 'dist', '.git', 'coverage', '.nyc_output', '.cache']);
const DEPENDENCY_KEYS = ['dependencies', 'optionalDependencies', 'peerDependencies', 'bundledDependencies', 'bundleDependencies'];

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: readonly string[], options: { cwd: string; env: Record<string, string> }): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
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
      reject(new Error(`${file} ${args.join(' ')} did not exit within ${COMMAND_DEADLINE_MS} ms`));
    }, COMMAND_DEADLINE_MS);
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

const work = realpathSync(mkdtempSync(join(tmpdir(), 'crm-pack-')));
const checkout = join(work, 'checkout');
const project = join(work, 'project');
/** No npm_* or NODE_OPTIONS from an outer `npm test`, a fresh npm cache and home: what a new user has. */
const env: Record<string, string> = {
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: join(work, 'home'),
  npm_config_cache: join(work, 'npm-cache'),
  npm_config_update_notifier: 'false',
};
let tarball = '';
let packedFiles: string[] = [];
let install: Exit = { code: null, stdout: '', stderr: '' };
const installed = join(project, 'node_modules', 'claude-run-mcp');
const bin = join(project, 'node_modules', '.bin', 'claude-run-mcp');

before(async () => {
  mkdirSync(env['HOME']!, { recursive: true });
  mkdirSync(checkout);
  for (const name of readdirSync(ROOT)) {
    if (NOT_SOURCE.has(name) || name.endsWith('.tgz') || name.endsWith('.mcpb')) continue;
    cpSync(join(ROOT, name), join(checkout, name), { recursive: true });
  }
  // The build tools are the checkout's dev dependencies, as after `npm ci`.
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
  const packed = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: checkout, env });
  assert.equal(packed.code, 0, packed.stderr);
  // prepack's own output (the build's hash line) precedes npm's JSON report on stdout.
  const report = objAt(JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[/m))), 0);
  tarball = join(work, str(report['filename'], 'npm pack filename'));
  packedFiles = objs(report['files'], 'npm pack files').map((f) => str(f['path'], 'npm pack file path'));
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
  );
  // Every use below needs the installed package; the first spec asserts how the install went.
  install = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: project, env });
});

after(() => {
  rmSync(work, { recursive: true, force: true });
});

describe('npm pack from a checkout without dist/', () => {
  it('prepack built the bin, the library entry and its declarations; sources and contract ship; nothing else', () => {
    for (const path of [
      `dist/${BUNDLE_NAME}`,
      'dist/index.mjs',
      'dist/types/npm-entry.d.ts',
      'dist/types/index.d.ts',
      'lib/index.ts',
      'lib/main.ts',
      'cli-tree.json',
      'manifest.json',
      'server.json',
      'README.md',
      'LICENSE',
      'package.json',
    ]) {
      assert.ok(packedFiles.includes(path), `${path} is packed`);
    }
    const stray = packedFiles.filter(
      (p) =>
        !/^(dist\/|lib\/|docs\/)/.test(p) &&
        !['cli-tree.json', 'manifest.json', 'server.json', 'README.md', 'LICENSE', 'package.json'].includes(p),
    );
    assert.deepEqual(stray, []);
    assert.ok(!packedFiles.some((p) => p.endsWith('.meta.json')), 'the build metafile stays out');
    assert.equal(
      readFileSync(join(checkout, 'bundle.sha256'), 'utf8'),
      readFileSync(join(ROOT, 'bundle.sha256'), 'utf8'),
      'packing never rewrites bundle.sha256',
    );
  });

  it('installs with `npm install --offline` into an empty project, without a warning', async () => {
    assert.equal(install.code, 0, install.stderr);
    assert.doesNotMatch(install.stderr, /warn/i);
    const manifest = parseObj(readFileSync(join(installed, 'package.json'), 'utf8'), 'the installed package.json');
    assert.deepEqual(
      DEPENDENCY_KEYS.filter((k) => k in manifest),
      [],
      'no runtime dependencies',
    );
    const entry = objAt(manifest, 'exports', '.');
    for (const path of [
      entry['types'],
      entry['import'],
      entry['require'],
      manifest['main'],
      manifest['types'],
      at(manifest, 'bin', 'claude-run-mcp'),
    ]) {
      assert.ok(typeof path === 'string' && existsSync(join(installed, path)), `${String(path)} is installed`);
    }
    assert.deepEqual(
      readdirSync(join(project, 'node_modules')).filter((n) => !n.startsWith('.')),
      ['claude-run-mcp'],
      'nothing else was installed',
    );
    const bundle = readFileSync(join(installed, 'dist', BUNDLE_NAME));
    assert.equal(
      createHash('sha256').update(bundle).digest('hex'),
      readCommittedHash(),
      'the installed bin is the audited bundle of bundle.sha256',
    );
  });

  it('one audited file runs every face: require resolves to the bundle, import to a face of names over it; no second copy of the code', () => {
    const manifest = parseObj(readFileSync(join(installed, 'package.json'), 'utf8'), 'the installed package.json');
    assert.deepEqual(objAt(manifest, 'exports', '.'), {
      types: './dist/types/npm-entry.d.ts',
      import: './dist/index.mjs',
      require: `./dist/${BUNDLE_NAME}`,
    });
    assert.equal(manifest['main'], `./dist/${BUNDLE_NAME}`);
    const runnable = packedFiles.filter((p) => /\.(c|m)?js$/.test(p));
    assert.deepEqual(runnable.sort(), [`dist/${BUNDLE_NAME}`, 'dist/index.mjs'], 'JavaScript the package ships: the bundle and its face');
    const face = readFileSync(join(installed, 'dist', 'index.mjs'), 'utf8');
    assert.ok(Buffer.byteLength(face) < MAX_FACE_BYTES, `the face is ${Buffer.byteLength(face)} bytes`);
    assert.ok(face.includes(`createRequire(import.meta.url)('./${BUNDLE_NAME}')`), 'the face requires the bundle beside it');
    assert.doesNotMatch(face, /\bfunction\b|=>|\bclass\b/, 'the face holds names, not code');
  });

  it("engines: the package declares its Node floor, and the Node running this suite (CI's) is at or above it", () => {
    const declared = str(at(parseObj(readFileSync(join(installed, 'package.json'), 'utf8')), 'engines', 'node'), 'engines.node');
    const floor = /^>=(\d+)\.(\d+)$/.exec(declared);
    assert.ok(floor, `engines.node is a plain floor (${declared})`);
    const [major = NaN, minor = NaN] = process.versions.node.split('.').map(Number);
    const [floorMajor, floorMinor] = [Number(floor[1]), Number(floor[2])];
    assert.ok(major > floorMajor || (major === floorMajor && minor >= floorMinor), `node ${process.versions.node} meets ${declared}`);
  });

  it('`npx claude-run-mcp --help` and `--version` answer on stdout with exit 0', async () => {
    const help = await run('npx', ['claude-run-mcp', '--help'], { cwd: project, env: { ...env, npm_config_offline: 'true' } });
    assert.equal(help.code, 0, help.stderr);
    for (const word of ['claude-run-mcp [serve]', 'claude-run-mcp print', 'claude-run-mcp check', '--claude-bin PATH'])
      assert.ok(help.stdout.includes(word), word);
    const version = await run('npx', ['claude-run-mcp', '--version'], { cwd: project, env: { ...env, npm_config_offline: 'true' } });
    assert.equal(version.stdout, `claude-run-mcp ${ADAPTER_VERSION} (tested with Claude Code ${CLI_TREE.native.tested_version})\n`);
  });

  it('a full MCP session through the installed bin against the fake CLI', async () => {
    const checks = await smokeTest(bin);
    assert.deepEqual(
      checks.filter((c) => !c.ok).map((c) => c.what),
      [],
    );
    assert.ok(checks.length >= 10, `${checks.length} checks ran`);
  });

  it('print through the installed bin prints the native JSON result', async () => {
    const printed = await run(bin, ['print', '--permission-mode', 'dontAsk', '--claude-bin', FAKE_CLAUDE, '--', 'say hi'], {
      cwd: project,
      env,
    });
    assert.equal(printed.code, 0, printed.stderr);
    const result = parseObj(printed.stdout, "print's stdout");
    assert.equal(result['type'], 'result');
    assert.equal(result['is_error'], false);
    const usage = await run(bin, ['print', '--permission-mode', 'dontAsk', '--model', '--', 'x'], { cwd: project, env });
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--model needs a value before the -- that starts the prompt/);
  });

  it('check through the installed bin asserts the pinned native binary', async () => {
    const checked = await run(bin, ['check', '--claude-bin', REAL_CLAUDE], { cwd: project, env });
    assert.equal(checked.code, 0, checked.stdout + checked.stderr);
    const report = parseObj(checked.stdout, "check's report");
    assert.equal(report['ok'], true);
    assert.equal(at(report, 'version', 'version'), CLI_TREE.native.tested_version);
  });

  it('the real Claude Code adds it with `claude mcp add … -- npx -y claude-run-mcp` (local, project and JSON forms) and connects', async () => {
    const claudeEnv = {
      ...env,
      npm_config_offline: 'true',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
    };
    const claude = (args: string[]): Promise<Exit> => run(REAL_CLAUDE, args, { cwd: project, env: claudeEnv });
    const local = await claude(['mcp', 'add', 'claude-run', '--', 'npx', '-y', 'claude-run-mcp']);
    assert.equal(local.code, 0, local.stderr);
    const json = await claude([
      'mcp',
      'add-json',
      '--scope',
      'user',
      'claude-run-json',
      JSON.stringify({ type: 'stdio', command: 'npx', args: ['-y', 'claude-run-mcp', '--underscore-names'] }),
    ]);
    assert.equal(json.code, 0, json.stderr);
    const shared = await claude(['mcp', 'add', '--scope', 'project', 'claude-run-project', '--', 'npx', '-y', 'claude-run-mcp']);
    assert.equal(shared.code, 0, shared.stderr);
    const projectServer = objAt(
      parseObj(readFileSync(join(project, '.mcp.json'), 'utf8'), '.mcp.json'),
      'mcpServers',
      'claude-run-project',
    );
    assert.deepEqual([projectServer['command'], projectServer['args']], ['npx', ['-y', 'claude-run-mcp']]);
    // `mcp list` starts each approved server and runs the MCP handshake with it (the project scope waits for approval).
    const listed = await claude(['mcp', 'list']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^claude-run: npx -y claude-run-mcp - ✔ Connected$/m);
    assert.match(listed.stdout, /^claude-run-json: npx -y claude-run-mcp --underscore-names - ✔ Connected$/m);
  });

  it('what the model sees: Claude Code started with that server lists mcp__claude-run__claude_run … as connected tools', async () => {
    const fake = await startFakeAnthropic({ scenario: { kind: 'text', text: 'seen' } });
    const sandbox = await createNativeSandbox({ baseUrl: fake.url });
    try {
      const config = JSON.stringify({ mcpServers: { 'claude-run': { command: 'npx', args: ['-y', 'claude-run-mcp'] } } });
      const started = await run(
        REAL_CLAUDE,
        ['-p', '--output-format', 'stream-json', '--verbose', '--mcp-config', config, '--strict-mcp-config', '--', 'say hi'],
        {
          cwd: project,
          env: { ...sandbox.env, npm_config_offline: 'true', npm_config_cache: env['npm_config_cache']! },
        },
      );
      assert.equal(started.code, 0, started.stderr);
      const events = jsonLines(started.stdout, 'stream-json line');
      const init = events.find((e) => e['type'] === 'system' && e['subtype'] === 'init');
      assert.ok(init, 'an init event');
      assert.deepEqual(
        objs(init['mcp_servers'], 'init.mcp_servers').map((s) => [s['name'], s['status']]),
        [['claude-run', 'connected']],
      );
      const seen = arr(init['tools'], 'init.tools')
        .map((name) => str(name, 'a tool name'))
        .filter((name) => name.startsWith('mcp__claude-run__'))
        .sort();
      assert.deepEqual(seen, TOOL_NAMES.map((name) => `mcp__claude-run__${name.replaceAll('.', '_')}`).sort());
      assert.equal(events.at(-1)?.['result'], 'seen');
      const left = await pollUntilGone(() => sandbox.processes(), SERVER_GONE_MS);
      assert.deepEqual(
        left.map((p) => p.cmdline),
        [],
        'the server Claude Code started is gone',
      );
    } finally {
      await fake.close();
      await sandbox.cleanup();
    }
  });

  it('plain Node imports the library (no tsx) and runs one claude.run in-process', async () => {
    assert.ok(!existsSync(join(project, 'node_modules', 'tsx')));
    writeFileSync(join(project, 'consumer.mjs'), CONSUMER);
    const dir = realpathSync(mkdtempSync(join(work, 'run-')));
    const consumer = await run(process.execPath, ['consumer.mjs', FAKE_CLAUDE, dir], { cwd: project, env });
    assert.equal(consumer.code, 0, consumer.stderr);
    const out = parseObj(consumer.stdout, "the consumer's report");
    assert.equal(out['resolved'], join(installed, 'dist', 'index.mjs'), 'import resolves to the face');
    assert.equal(at(out, 'tools', 0), 'claude.run');
    assert.deepEqual(out['supervisor'], [join(installed, 'dist', BUNDLE_NAME), '__supervisor']);
    const result = objAt(out, 'result');
    assert.equal(result['state'], 'completed');
    assert.equal(result['is_error'], false, JSON.stringify(result['error']));
    assert.equal(result['cleanup_confirmed'], true);
  });

  it('plain Node requires the library (CommonJS): the bundle itself, the same API, one claude.run in-process', async () => {
    writeFileSync(join(project, 'consumer.cjs'), REQUIRING_CONSUMER);
    const dir = realpathSync(mkdtempSync(join(work, 'run-')));
    const consumer = await run(process.execPath, ['consumer.cjs', FAKE_CLAUDE, dir], { cwd: project, env });
    assert.equal(consumer.code, 0, consumer.stderr);
    const out = parseObj(consumer.stdout, "the consumer's report");
    assert.equal(out['resolved'], join(installed, 'dist', BUNDLE_NAME), 'require resolves to the audited bundle');
    assert.equal(at(out, 'tools', 0), 'claude.run');
    assert.deepEqual(out['supervisor'], [join(installed, 'dist', BUNDLE_NAME), '__supervisor']);
    const result = objAt(out, 'result');
    assert.equal(result['is_error'], false, JSON.stringify(result['error']));
    assert.equal(result['cleanup_confirmed'], true);
  });

  it('a TypeScript consumer type-checks against the shipped declarations, and a wrong use fails', async () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules', '@types')],
        },
        files: ['typed.mts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    writeFileSync(join(project, 'typed.mts'), TYPED_CONSUMER);
    const good = await run(process.execPath, [tsc, '-p', '.'], { cwd: project, env });
    assert.equal(good.code, 0, good.stdout);
    writeFileSync(join(project, 'typed.mts'), `${TYPED_CONSUMER}createClaudeRunAdapter({ maxTimeoutSeconds: 'long' });\n`);
    const bad = await run(process.execPath, [tsc, '-p', '.'], { cwd: project, env });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stdout, /typed\.mts\(\d+,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
  });
});

const CONSUMER = `import { createClaudeRunAdapter, getPackagedSupervisorCommand, TOOL_NAMES } from 'claude-run-mcp';
import { fileURLToPath } from 'node:url';
const [claudeBin, cwd] = process.argv.slice(2);
const adapter = createClaudeRunAdapter({ claudeBin, cwd, env: { PATH: process.env.PATH, HOME: cwd } });
await adapter.handle({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'consumer', version: '1' } } });
await adapter.handle({ jsonrpc: '2.0', method: 'notifications/initialized' });
const response = await adapter.handle({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'claude.run', arguments: { prompt: 'say hi', cwd } } });
await adapter.close();
process.stdout.write(JSON.stringify({
  resolved: fileURLToPath(import.meta.resolve('claude-run-mcp')),
  tools: TOOL_NAMES,
  supervisor: getPackagedSupervisorCommand().args,
  result: response.result.structuredContent.result,
}));
`;

const REQUIRING_CONSUMER = `const { createClaudeRunAdapter, getPackagedSupervisorCommand, TOOL_NAMES } = require('claude-run-mcp');
const [claudeBin, cwd] = process.argv.slice(2);
(async () => {
  const adapter = createClaudeRunAdapter({ claudeBin, cwd, env: { PATH: process.env.PATH, HOME: cwd } });
  await adapter.handle({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'consumer', version: '1' } } });
  const response = await adapter.handle({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'claude.run', arguments: { prompt: 'say hi', cwd } } });
  await adapter.close();
  process.stdout.write(JSON.stringify({
    resolved: require.resolve('claude-run-mcp'),
    tools: TOOL_NAMES,
    supervisor: getPackagedSupervisorCommand().args,
    result: response.result.structuredContent.result,
  }));
})();
`;

const TYPED_CONSUMER = `import { createClaudeRunAdapter, TOOL_NAMES, type Adapter, type ClaudeRunAdapterOptions, type RunResult } from 'claude-run-mcp';
const options: ClaudeRunAdapterOptions = { claudeBin: '/usr/local/bin/claude', maxTimeoutSeconds: 600, promptViaStdin: true };
const adapter: Adapter = createClaudeRunAdapter(options);
const first: string = TOOL_NAMES[0];
const settled = (result: RunResult): boolean => result.is_error;
void first; void settled; void adapter.close();
`;
