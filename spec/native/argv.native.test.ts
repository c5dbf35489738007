// The real pinned binary accepts the argv the builder produces, and takes the prompt from stdin (never
// argv): one stream-json user line under stream-json output, the bare text under json output. No credentials and a closed local base URL: the run stops at "not logged in"
// before any request, which is enough to see what the argument parser and prompt reader accepted.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildNativeArgv } from '../../lib/native/argv.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import { parseObj } from '../helpers/typed-results.ts';
import type { JsonObject } from '../../lib/util/json.ts';

const REAL = fileURLToPath(new URL('../../node_modules/.bin/claude', import.meta.url));
const SESSION = '0a1b2c3d-0000-4000-8000-00000000000a';
const RUN_DEADLINE_MS = 60_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runReal(args: readonly string[], stdin: string | null, home: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(REAL, [...args], {
      cwd: home,
      stdio: [stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: home,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_ERROR_REPORTING: '1',
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_DEADLINE_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (stdin !== null) child.stdin?.end(stdin);
  });
}

function lastResult(stdout: string): JsonObject {
  const lines = stdout.trim().split('\n');
  return parseObj(lines[lines.length - 1] ?? '', 'the last stdout line');
}

describe('the real pinned binary and the built argv', () => {
  let home = '';
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'claude-home-'));
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  it('parses every declared option as the builder emits it', async () => {
    const { args, stdin } = buildNativeArgv({
      tree: CLI_TREE,
      outputMode: 'json',
      permissionMode: 'acceptEdits',
      options: {
        model: 'sonnet',
        effort: 'high',
        append_system_prompt: 'Be terse.',
        max_budget_usd: 0.25,
        max_turns: 3,
        session_id: SESSION,
        no_session_persistence: true,
        allowed_tools: ['Read', 'Bash(git status:*)'],
        disallowed_tools: ['WebFetch'],
        add_dirs: [home, tmpdir()],
      },
      prompt: '-a prompt that looks like a flag',
    });
    assert.ok(!args.includes('-a prompt that looks like a flag'));
    const run = await runReal(args, stdin, home);
    assert.doesNotMatch(run.stderr, /error:|unknown option|read as a value/i);
    const result = lastResult(run.stdout);
    assert.equal(result['type'], 'result');
    assert.equal(result['session_id'], SESSION);
  });

  it('takes a stream-json user line on stdin', async () => {
    const { args, stdin, streamInput } = buildNativeArgv({
      tree: CLI_TREE,
      outputMode: 'stream-json',
      permissionMode: 'dontAsk',
      options: { no_session_persistence: true, add_dirs: [home] },
      prompt: 'hello over stdin',
    });
    assert.equal(streamInput, true);
    assert.ok(args.join(' ').includes('--input-format stream-json'));
    const run = await runReal(args, stdin, home);
    assert.doesNotMatch(run.stderr, /Input must be provided|no stdin data|input-format/);
    assert.equal(lastResult(run.stdout)['type'], 'result');
  });

  it('takes a text prompt past 128 KiB on stdin under json output', async () => {
    const prompt = 'x'.repeat(128 * 1024 + 1);
    const { args, stdin, streamInput } = buildNativeArgv({
      tree: CLI_TREE,
      outputMode: 'json',
      permissionMode: 'dontAsk',
      options: { no_session_persistence: true },
      prompt,
    });
    assert.equal(streamInput, false);
    assert.equal(stdin, prompt);
    const run = await runReal(args, stdin, home);
    assert.doesNotMatch(run.stderr, /Input must be provided/);
    assert.equal(lastResult(run.stdout)['type'], 'result');
  });

  it('control: the same argv with empty stdin is refused for lack of a prompt', async () => {
    const { args } = buildNativeArgv({
      tree: CLI_TREE,
      outputMode: 'json',
      permissionMode: 'dontAsk',
      options: { no_session_persistence: true },
      prompt: 'unused',
    });
    const run = await runReal(args, '', home);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /Input must be provided either through stdin or as a prompt argument/);
  });
});
