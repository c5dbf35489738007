// The MCP Bundle for Claude Desktop: manifest.json passes the official `mcpb validate`, `npm run pack:mcpb`
// (scripts/pack-mcpb.ts) zips the audited bundle with it, and the server starts from the unpacked bundle
// with the command line the official library derives from manifest.json and the user's settings (what
// Claude Desktop runs): each user_config field reaches the server (binary, timeout bound, names, stdin).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { getMcpConfigForManifest, hasRequiredConfigMissing, unpackExtension, vAny, type McpbManifestAny } from '@anthropic-ai/mcpb';
import { BUNDLE_NAME, readCommittedHash, ROOT } from '../../scripts/build.ts';
import { MCPB_CLI, packMcpb } from '../../scripts/pack-mcpb.ts';
import { parseServeArgs } from '../../lib/cli/args.ts';
import {
  DEFAULT_MAX_TIMEOUT_SECONDS,
  MAX_BUDGET_USD_LIMIT,
  MAX_TIMEOUT_SECONDS_LIMIT,
  OPTION_KEYS,
  SERVER_OPTIONS,
  toUserConfigKey,
} from '../../lib/cli/server-options.ts';
import { TOOL_NAMES } from '../../lib/tools/declarations.ts';
import { startServer } from '../e2e/server-process.ts';
import { at, objs, parseObj, rpcResult, toolResultOf } from '../helpers/typed-results.ts';
import { readFakeRecord } from '../helpers/tool-harness.ts';

const run = promisify(execFile);
const FAKE_CLAUDE = join(ROOT, 'fixtures', 'fake-claude.mjs');
/** manifest.json read through the official schema: a manifest it rejects fails here, at the read. */
const readManifest = (file: string): McpbManifestAny => vAny.McpbManifestSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
const manifest = readManifest(join(ROOT, 'manifest.json'));
const work = realpathSync(mkdtempSync(join(tmpdir(), 'crm-mcpb-test-')));
after(() => {
  rmSync(work, { recursive: true, force: true });
});

describe('manifest.json', () => {
  it('passes the official `mcpb validate`', async () => {
    const { stdout } = await run(process.execPath, [MCPB_CLI, 'validate', join(ROOT, 'manifest.json')]);
    assert.match(stdout, /Manifest schema validation passes/);
  });

  it('agrees with package.json and the server: version, tool names, user_config bounds', () => {
    const pkg = parseObj(readFileSync(join(ROOT, 'package.json'), 'utf8'), 'package.json');
    assert.equal(manifest.version, pkg['version']);
    assert.equal(manifest.server.entry_point, `dist/${BUNDLE_NAME}`);
    assert.equal(manifest.server.mcp_config.args?.[0], `\${__dirname}/${manifest.server.entry_point}`);
    assert.deepEqual(
      manifest.tools?.map((t) => t.name),
      TOOL_NAMES.map((n) => n.replaceAll('.', '_')),
    );
    assert.equal(`>=${manifest.compatibility?.runtimes?.node?.replace(/^>=|\.0$/g, '')}`, at(pkg, 'engines', 'node'));
    const config = manifest.user_config ?? {};
    assert.deepEqual(Object.keys(config), OPTION_KEYS.filter((key) => SERVER_OPTIONS[key].published).map(toUserConfigKey));
    assert.equal(config['claude_bin']?.['type'], 'file');
    assert.equal(config['claude_bin']?.['required'], true);
    assert.deepEqual(
      [config['max_timeout_seconds']?.['min'], config['max_timeout_seconds']?.['max'], config['max_timeout_seconds']?.['default']],
      [1, MAX_TIMEOUT_SECONDS_LIMIT, DEFAULT_MAX_TIMEOUT_SECONDS],
    );
    assert.equal(config['underscore_names']?.['default'], true, 'Claude Desktop gets names without dots by default');
    assert.deepEqual(
      [config['budget_usd']?.['min'], config['budget_usd']?.['max'], config['budget_usd']?.['default']],
      [0, MAX_BUDGET_USD_LIMIT, 0],
      'no budget unless one is set',
    );
    for (const value of [0, 0.5, MAX_BUDGET_USD_LIMIT])
      assert.equal(
        parseServeArgs([`--budget-usd=${value}`]).kind,
        'config',
        `budget_usd ${value} reaches the server as a valid --budget-usd`,
      );
    assert.equal(hasRequiredConfigMissing({ manifest, userConfig: {} }), true, 'no server starts without the binary path');
  });
});

describe('npm run pack:mcpb', () => {
  it('zips manifest.json, README.md and the audited bundle; the unpacked server serves what user_config says', async () => {
    const packed = await packMcpb(join(work, 'claude-run-mcp.mcpb'));
    assert.equal(packed.bundleSha256, readCommittedHash());
    const unpacked = join(work, 'unpacked');
    assert.equal(await unpackExtension({ mcpbPath: packed.file, outputDir: unpacked, silent: true }), true);
    assert.deepEqual(readdirSync(unpacked).sort(), ['README.md', 'dist', 'manifest.json']);
    assert.deepEqual(readdirSync(join(unpacked, 'dist')), [BUNDLE_NAME]);
    assert.equal(
      createHash('sha256')
        .update(readFileSync(join(unpacked, 'dist', BUNDLE_NAME)))
        .digest('hex'),
      readCommittedHash(),
    );

    const config = await getMcpConfigForManifest({
      manifest: readManifest(join(unpacked, 'manifest.json')),
      extensionPath: unpacked,
      systemDirs: {},
      userConfig: { claude_bin: FAKE_CLAUDE, max_timeout_seconds: 900 },
      pathSeparator: '/',
    });
    assert.ok(config !== undefined);
    assert.equal(config.command, 'node');
    const args = config.args ?? [];
    assert.equal(args[0], join(unpacked, 'dist', BUNDLE_NAME));
    const record = join(work, 'record.json');
    const server = startServer([], args, { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: work, FAKE_CLAUDE_RECORD: record } });
    try {
      server.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'desktop-like', version: '0' } },
      });
      await server.response(1);
      server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      server.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      const tools = objs(rpcResult(await server.response(2))['tools'], 'tools');
      assert.deepEqual(
        tools.map((t) => t['name']),
        manifest.tools?.map((t) => t.name),
        'underscore names (the default)',
      );
      assert.equal(at(tools, 0, 'inputSchema', 'properties', 'timeout_seconds', 'maximum'), 900, 'max_timeout_seconds reached the server');
      const prompt = 'hello from a bundle';
      server.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'claude_run', arguments: { prompt, cwd: work } } });
      const result = toolResultOf(rpcResult(await server.response(3)));
      assert.equal(result['is_error'], false, JSON.stringify(result['error']));
      assert.equal(result['cleanup_confirmed'], true);
      const seen = readFakeRecord(record);
      assert.equal(seen.stdin, prompt, 'prompt_via_stdin (the default) handed the prompt over on stdin');
      assert.ok(!seen.argv.includes(prompt), 'and kept it out of argv');
      server.child.stdin.end();
      assert.deepEqual(await server.exited(), { code: 0, signal: null });
    } finally {
      server.kill();
    }
  });
});
