// A server started by a Claude Code session inherits that session's variables; the nested native
// processes (the version check and the run) must not. The fake CLI records each process's env.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolHarness, readFakeRecord, recordFiles } from '../helpers/tool-harness.ts';
import { HOST_SESSION_ENV } from '../../lib/native/native-env.ts';

/** What a user owns and a nested run needs: kept byte for byte. */
const USER_OWNED: Record<string, string> = {
  ANTHROPIC_API_KEY: 'sk-user',
  ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
  ANTHROPIC_CUSTOM_HEADERS: 'x-a: b',
  CLAUDE_CODE_USE_BEDROCK: '0',
  AWS_REGION: 'eu-west-1',
  HTTPS_PROXY: 'http://proxy:3128',
  NO_PROXY: 'localhost',
  NODE_EXTRA_CA_CERTS: '/etc/ca.pem',
  CLAUDE_CONFIG_DIR: '/home/u/.claude-alt',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  LANG: 'C.UTF-8',
  TRACEPARENT: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
};

test('the host session variables never reach the version check or the run; user-owned variables do', async () => {
  const recordDir = mkdtempSync(join(tmpdir(), 'crm-nested-env-'));
  const hostSession = Object.fromEntries(HOST_SESSION_ENV.map((name) => [name, `host-${name}`]));
  const h = await createToolHarness({ env: { ...hostSession, ...USER_OWNED, FAKE_CLAUDE_RECORD_DIR: recordDir } });
  try {
    const out = await h.call('claude.run', { prompt: 'say hi', cwd: h.dir });
    assert.equal(out.isError, false, out.text);
    const records = recordFiles(recordDir).map(readFakeRecord);
    const version = records.filter((r) => r.argv.includes('--version'));
    const run = records.filter((r) => r.argv.includes('-p'));
    assert.equal(version.length, 1, 'one version check');
    assert.equal(run.length, 1, 'one run');
    for (const record of [...version, ...run]) {
      for (const name of HOST_SESSION_ENV) assert.ok(!(name in record.env), `${name} reached ${record.argv.join(' ')}`);
      for (const [name, value] of Object.entries(USER_OWNED)) assert.equal(record.env[name], value, `${name} kept`);
      assert.equal(record.env['HOME'], h.dir);
      assert.equal(record.env['CLAUDE_RUN_MCP_ACTIVE'], '1');
    }
    assert.equal(run[0]!.cwd, h.dir, 'the run works in its own cwd; it derives its project from it');
  } finally {
    await h.close();
    rmSync(recordDir, { recursive: true, force: true });
  }
});

test('the list covers what the captures saw a host hand to its MCP servers', () => {
  // The names an MCP server was captured inheriting from Claude Code 2.1.332.
  for (const name of [
    'CLAUDECODE',
    'CLAUDE_CODE_SESSION_ID',
    'CLAUDE_PROJECT_DIR',
    'CLAUDE_CODE_ENTRYPOINT',
    'CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS',
    'CLAUDE_CODE_MESSAGING_SOCKET',
    'CLAUDE_CODE_MESSAGING_TOKEN',
    'CLAUDE_CODE_CHILD_NOTES_DIR',
    'AI_AGENT',
  ]) {
    assert.ok(HOST_SESSION_ENV.includes(name), name);
  }
});
