// The CLI roles against the real binary: `print` returns the native JSON result unchanged (compared with
// the same native call made directly), and `check` reports the pinned version with no drift.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { lastUserText, scenarioCustomHeader, startFakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import type { FakeAnthropic } from '../../fixtures/fake-anthropic/server.ts';
import { createNativeSandbox, pollUntilGone, realClaudeBin } from '../helpers/native-env.ts';
import type { NativeSandbox } from '../helpers/native-env.ts';
import { resultOf, runClaude } from './direct-claude.ts';
import { describeProcesses, LEAK_POLL_MS } from './adapter-tier.ts';
import { at, parseObj } from '../helpers/typed-results.ts';
import { serverNodeArgs } from '../helpers/bundle.ts';

const REPLY = 'Hi from the fake, printed by the projection.';
/** Far above a fake turn; only a hung process gets here, and then it is killed. */
const ROLE_DEADLINE_MS = 60_000;

interface RoleRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the server (the spec bundle, or lib/main.ts under tsx) with `<args>` in the sandbox cwd with the sandbox env (plus `extraEnv`). */
function runRole(sandbox: NativeSandbox, args: readonly string[], extraEnv: Record<string, string> = {}): Promise<RoleRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...serverNodeArgs(), ...args], {
      cwd: sandbox.cwd,
      env: { ...sandbox.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`lib/main.ts ${args[0] ?? ''} did not exit within ${ROLE_DEADLINE_MS} ms; stderr: ${stderr}`));
    }, ROLE_DEADLINE_MS);
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

describe('CLI roles over the real binary', () => {
  let fake: FakeAnthropic;
  let sandbox: NativeSandbox;
  before(async () => {
    fake = await startFakeAnthropic({ scenario: { kind: 'text', text: REPLY } });
    sandbox = await createNativeSandbox({ baseUrl: fake.url });
  });
  after(async () => {
    try {
      const left = await pollUntilGone(() => sandbox.processes(), LEAK_POLL_MS);
      assert.deepEqual(describeProcesses(left), [], 'nothing left running');
    } finally {
      await fake.close();
      await sandbox.cleanup();
    }
  });

  it('print --permission-mode dontAsk -- "say hi": stdout is the native JSON result, unchanged; exit 0', async (t) => {
    const started = performance.now();
    const run = await runRole(sandbox, ['print', '--permission-mode', 'dontAsk', '--claude-bin', realClaudeBin(), '--', 'say hi']);
    t.diagnostic(`print round trip: ${Math.round(performance.now() - started)} ms`);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    assert.ok(run.stdout.endsWith('\n'));
    const lines = run.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 1, 'one line: the json-mode result');
    const printed = parseObj(lines[0] ?? '', 'the printed result');
    assert.equal(JSON.stringify(printed), lines[0], 'compact native JSON, not re-formatted');
    assert.equal(printed['type'], 'result');
    assert.equal(printed['subtype'], 'success');
    assert.equal(printed['is_error'], false);
    assert.equal(printed['result'], REPLY, 'the text the fake replied');
    const call = fake.requests.filter((r) => r.path === '/v1/messages' && lastUserText(r.body) === 'say hi').at(-1);
    assert.ok(call);
    assert.equal(printed['session_id'], call.headers['x-claude-code-session-id'], 'the session the native process used');

    // The same native call made directly: the projection adds, drops and reorders nothing.
    const direct = await runClaude(sandbox, ['-p', '--output-format', 'json', '--permission-mode', 'dontAsk', '--', 'say hi']);
    assert.equal(direct.code, 0, direct.stderr);
    assert.equal(direct.events.length, 1, 'json mode prints one object');
    const native = resultOf(direct);
    assert.deepEqual(Object.keys(printed), Object.keys(native), 'same fields in the same order');
    for (const key of [
      'type',
      'subtype',
      'is_error',
      'result',
      'num_turns',
      'usage',
      'modelUsage',
      'permission_denials',
      'terminal_reason',
    ]) {
      assert.deepEqual(printed[key], native[key], key);
    }
  });

  it('print against a 401: the native result still printed, one JSON error line on stderr, exit 1', async () => {
    const run = await runRole(sandbox, ['print', '--permission-mode', 'dontAsk', '--claude-bin', realClaudeBin(), '--', 'say hi'], {
      ANTHROPIC_CUSTOM_HEADERS: scenarioCustomHeader('http_401'),
    });
    assert.equal(run.code, 1);
    const printed = parseObj(run.stdout, 'the printed result');
    assert.equal(printed['is_error'], true);
    assert.equal(printed['api_error_status'], 401);
    const error = parseObj(run.stderr.trim(), 'the stderr error line');
    assert.equal(error['code'], 'authentication_failed');
    assert.equal(error['message'], printed['result']);
  });

  it('check --claude-bin <pinned>: version 2.1.332 asserted (equal to `claude --version`), no help drift, exit 0', async () => {
    const version = await runClaude(sandbox, ['--version']);
    assert.deepEqual(version.plainLines, ['2.1.332 (Claude Code)']);
    const run = await runRole(sandbox, ['check', '--claude-bin', realClaudeBin()]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const report = parseObj(run.stdout, 'the check report');
    assert.equal(report['ok'], true);
    assert.equal(report['binary'], realClaudeBin());
    assert.equal(report['tested_version'], '2.1.332');
    assert.deepEqual(report['version'], { ok: true, version: '2.1.332' });
    assert.equal(at(report, 'help', 'ok'), true);
  });
});
