// The fake CLI models 2.1.332's session persistence (transcript paths, --session-id/--resume/--continue and their refusals); the session specs rely on it, so it is
// checked here directly, without the adapter in between.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FAKE_CLAUDE } from '../helpers/tool-harness.ts';
import { encodeProjectPath } from '../../lib/native/transcripts.ts';
import { at, jsonLines, num, objAt } from '../helpers/typed-results.ts';
import type { JsonObject } from '../../lib/util/json.ts';

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  events: JsonObject[];
}

function sandbox(): {
  home: string;
  cwd: string;
  other: string;
  run: (args: string[], cwd?: string, env?: Record<string, string>) => Outcome;
  projectDir: (cwd: string) => string;
  close: () => void;
} {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'crm-fake-sess-')));
  const cwd = join(home, 'work dir');
  const other = join(home, 'other');
  mkdirSync(cwd);
  mkdirSync(other);
  return {
    home,
    cwd,
    other,
    run(args, at = cwd, env = {}) {
      const out = spawnSync(process.execPath, [FAKE_CLAUDE, '-p', '--output-format', 'stream-json', '--verbose', ...args, '--', 'hello'], {
        cwd: at,
        env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: home, ...env },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 20_000,
      });
      const events = jsonLines(out.stdout, 'stream-json line');
      return { code: out.status, stdout: out.stdout, stderr: out.stderr, events };
    },
    projectDir: (dir) => join(home, '.claude', 'projects', encodeProjectPath(realpathSync(dir))),
    close: () => rmSync(home, { recursive: true, force: true }),
  };
}

const final = (o: Outcome): JsonObject => o.events.find((e) => e['type'] === 'result') ?? {};
const init = (o: Outcome): JsonObject | undefined => o.events.find((e) => e['subtype'] === 'init');
const cost = (o: Outcome): number => num(final(o)['total_cost_usd'], 'total_cost_usd');
const callCost = (o: Outcome): number => num(at(Object.values(objAt(final(o), 'model_usage_since_last_result')), 0, 'costUSD'), 'costUSD');

test('fake sessions: new, in use, resume (cumulative cost), fork, continue, no persistence', () => {
  const s = sandbox();
  try {
    const id = '11111111-2222-4333-8444-555555555555';
    const first = s.run(['--session-id', id]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(init(first)?.['session_id'], id);
    assert.ok(existsSync(join(s.projectDir(s.cwd), `${id}.jsonl`)));
    assert.equal(cost(first), callCost(first));

    const reuse = s.run(['--session-id', id]);
    assert.equal(reuse.code, 1);
    assert.equal(reuse.stdout, '');
    assert.equal(reuse.stderr, `Error: Session ID ${id} is already in use.\n`);

    const resumed = s.run(['--resume', id], s.other); // 2.1.332 resumes across directories
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(init(resumed)?.['session_id'], id);
    assert.ok(cost(resumed) > callCost(resumed), 'total_cost_usd is cumulative for the conversation');
    assert.deepEqual(readdirSync(s.projectDir(s.cwd)), [`${id}.jsonl`], 'appended to the original transcript');
    assert.equal(existsSync(s.projectDir(s.other)), false);

    const unknown = '99999999-2222-4333-8444-555555555555';
    const missing = s.run(['--resume', unknown]);
    assert.equal(missing.code, 1);
    assert.equal(init(missing), undefined);
    assert.equal(final(missing)['subtype'], 'error_during_execution');
    assert.deepEqual(final(missing)['errors'], [`No conversation found with session ID: ${unknown}`]);
    assert.match(missing.stderr, /No conversation found/);

    const fork = s.run(['--resume', id, '--fork-session']);
    const forkId = String(init(fork)?.['session_id']);
    assert.equal(fork.code, 0);
    assert.notEqual(forkId, id);
    assert.ok(existsSync(join(s.projectDir(s.cwd), `${forkId}.jsonl`)));

    const cont = s.run(['--continue']);
    assert.equal(init(cont)?.['session_id'], forkId, 'continue takes the newest transcript of the cwd (the fork)');

    const fresh = s.run(['--continue'], s.other);
    assert.equal(fresh.code, 0, 'no conversation in that directory: silently a new one');
    const freshId = String(init(fresh)?.['session_id']);
    assert.ok(![id, forkId].includes(freshId));
    assert.equal(cost(fresh), callCost(fresh));

    const before = readdirSync(s.projectDir(s.other)).sort();
    const none = s.run(['--no-session-persistence']);
    assert.equal(none.code, 0);
    const noneId = String(init(none)?.['session_id']);
    assert.equal(s.run(['--resume', noneId]).code, 1, 'an unpersisted conversation cannot be resumed');
    const readOnly = s.run(['--resume', freshId, '--no-session-persistence'], s.other);
    assert.equal(init(readOnly)?.['session_id'], freshId);
    assert.deepEqual(readdirSync(s.projectDir(s.other)).sort(), before);
    const lines = readFileSync(join(s.projectDir(s.other), `${freshId}.jsonl`), 'utf8')
      .trim()
      .split('\n').length;
    assert.equal(s.run(['--resume', freshId, '--no-session-persistence'], s.other).code, 0);
    assert.equal(
      readFileSync(join(s.projectDir(s.other), `${freshId}.jsonl`), 'utf8')
        .trim()
        .split('\n').length,
      lines,
      'reads but does not append',
    );
  } finally {
    s.close();
  }
});

test('fake sessions: a config folder outside the temp directory is never touched', () => {
  const s = sandbox();
  try {
    const out = s.run(['--continue'], s.cwd, { HOME: '/nonexistent-home-for-spec', CLAUDE_CONFIG_DIR: '/nonexistent-config-for-spec' });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(existsSync('/nonexistent-config-for-spec'), false);
    const viaConfig = s.run([], s.cwd, { CLAUDE_CONFIG_DIR: join(s.home, 'cfg') });
    assert.ok(
      existsSync(join(s.home, 'cfg', 'projects', encodeProjectPath(s.cwd), `${String(init(viaConfig)?.['session_id'])}.jsonl`)),
      'CLAUDE_CONFIG_DIR wins over HOME',
    );
  } finally {
    s.close();
  }
});
