import { test } from 'node:test';
import { BACKENDS } from '../helpers/backends.ts';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolHarness, readFakeRecord } from '../helpers/tool-harness.ts';
import { arrAt, at, jsonLines, num } from '../helpers/typed-results.ts';
import { createManualClock } from '../helpers/manual-clock.ts';
import { pollUntil } from '../helpers/poll.ts';

test('claude.run succeeds end to end with honest fields, progress and confirmed cleanup', async () => {
  const h = await createToolHarness();
  try {
    const out = await h.call('claude.run', { prompt: 'say hi', cwd: h.dir, model: 'sonnet' }, { progressToken: 'p1' });
    assert.equal(out.isError, false, out.text);
    const r = out.result!;
    assert.equal(r['state'], 'completed');
    assert.equal(r['completed'], true);
    assert.equal(r['is_error'], false);
    assert.equal(r['error'], null);
    assert.equal(r['result'], 'Hi! I am a fake Claude.');
    assert.match(String(r['session_id']), /^[0-9a-f-]{36}$/);
    assert.equal(r['model'], 'sonnet');
    assert.equal(r['cleanup_confirmed'], true);
    assert.equal(r['cleanup_error'], null);
    assert.equal(r['total_cost_usd'], 0.049148);
    assert.equal(r['cost_scope'], 'conversation');
    assert.equal(r['num_turns'], 1);
    const full = await h.full(r['run_id']);
    assert.equal(full['exit_code'], 0);
    assert.ok(num(full['events_total']) > 5);
    const progress = h.notifications.filter((n) => n['method'] === 'notifications/progress');
    assert.ok(progress.length >= 5);
    const counters = progress.map((n) => num(at(n, 'params', 'progress'), 'progress'));
    assert.deepEqual(
      counters,
      counters.map((_, i) => i + 1),
    );
  } finally {
    await h.close();
  }
});

test('the native process receives exact argv (the prompt as a stdin user line, never argv), and only scrubbed env', async () => {
  const recordDir = mkdtempSync(join(tmpdir(), 'crm-record-'));
  const record = join(recordDir, 'record.json');
  const h2 = await createToolHarness({ env: { COMPUTER_MCP_SECRET: 'x', FAKE_CLAUDE_RECORD: record } });
  try {
    const out = await h2.call('claude.run', { prompt: '-starts with a dash', cwd: h2.dir, allowed_tools: ['Read', 'Grep'], max_turns: 3 });
    assert.equal(out.isError, false, out.text);
    const rec = readFakeRecord(record);
    assert.deepEqual(rec.argv, [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--include-partial-messages',
      '--input-format',
      'stream-json',
      '--max-turns',
      '3',
      '--permission-mode',
      'dontAsk',
      '--allowedTools',
      'Read',
      '--allowedTools',
      'Grep',
    ]);
    assert.equal(rec.stdin, '-starts with a dash', 'the user line the native read');
    assert.ok(!('COMPUTER_MCP_SECRET' in rec.env));
    assert.equal(rec.env['CLAUDE_RUN_MCP_ACTIVE'], '1');
    // Node's own descriptors are close-on-exec (created after exec); anything inherited would not be.
    assert.deepEqual(
      rec.fds?.filter((f) => f.fd > 2 && f.cloexec !== true),
      [],
    );
  } finally {
    await h2.close();
    rmSync(recordDir, { recursive: true, force: true });
  }
});

const failures: Array<[string, string, Record<string, string>?]> = [
  ['exit_nonzero', 'native_exit_nonzero'],
  ['no_result', 'missing_final_event'],
  ['two_results', 'duplicate_final_event'],
  ['malformed_result', 'malformed_final_event'],
  ['huge_line', 'native_frame_too_large'],
  ['huge_final', 'final_event_too_large'],
  ['api_error_401', 'authentication_failed'],
  ['api_error_429', 'rate_limited'],
  ['api_error_500', 'api_server_error'],
  ['api_error_529', 'overloaded'],
  ['resume_not_found', 'session_not_found'],
  ['session_in_use', 'session_id_in_use'],
];
for (const [scenario, code] of failures) {
  test(`scenario ${scenario} is a tool error with code ${code} and confirmed cleanup`, async () => {
    const h = await createToolHarness({ env: { FAKE_CLAUDE_SCENARIO: scenario } });
    try {
      const out = await h.call('claude.run', { prompt: 'x', cwd: h.dir });
      assert.equal(out.isError, true);
      assert.equal(out.error?.code, code, out.text.slice(0, 400));
      assert.equal(out.result!['cleanup_confirmed'], true);
      assert.equal(out.result!['completed'], true);
    } finally {
      await h.close();
    }
  });
}

/** Resolves once the fake CLI has written a readiness line `what` to its ready file. */
async function waitForReady(file: string, what: string): Promise<void> {
  await pollUntil(
    `the fake's readiness line "${what}"`,
    () => {
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        /* not yet written */
      }
      return text.split('\n').some((line) => line.includes(`"ready":"${what}"`));
    },
    { timeoutMs: 30_000 },
  );
}

test('timeout: a final event followed by a process that never exits still times out', async () => {
  const clock = createManualClock();
  const readyDir = mkdtempSync(join(tmpdir(), 'crm-ready-'));
  const readyFile = join(readyDir, 'ready.jsonl');
  const h = await createToolHarness({
    env: { FAKE_CLAUDE_SCENARIO: 'hang_after_result', FAKE_CLAUDE_READY_FILE: readyFile },
    config: { clock },
  });
  try {
    const pending = h.call('claude.run', { prompt: 'x', cwd: h.dir, timeout_seconds: 5 });
    await waitForReady(readyFile, 'result');
    clock.advance(4_999);
    clock.advance(1);
    const out = await pending;
    assert.equal(out.isError, true);
    assert.equal(out.error?.code, 'timeout');
    assert.equal((await h.full(out.result!['run_id']))['timed_out'], true);
    assert.equal(out.result!['result'], 'Hi! I am a fake Claude.', 'the first valid final event stays available');
    assert.equal(out.result!['cleanup_confirmed'], true);
  } finally {
    await h.close();
    rmSync(readyDir, { recursive: true, force: true });
  }
});

test('idle timeout ends a run that stays silent for idle_timeout_seconds', async () => {
  const clock = createManualClock();
  const readyDir = mkdtempSync(join(tmpdir(), 'crm-ready-'));
  const readyFile = join(readyDir, 'ready.jsonl');
  const h = await createToolHarness({
    env: { FAKE_CLAUDE_SCENARIO: 'slow', FAKE_CLAUDE_DELAY_MS: '60000', FAKE_CLAUDE_READY_FILE: readyFile },
    config: { clock },
  });
  try {
    const pending = h.call('claude.run', { prompt: 'x', cwd: h.dir, idle_timeout_seconds: 2, timeout_seconds: 100 });
    await waitForReady(readyFile, 'streaming');
    clock.advance(2_000);
    const out = await pending;
    assert.equal(out.error?.code, 'idle_timeout');
    assert.equal((await h.full(out.result!['run_id']))['timed_out'], true);
    assert.equal(out.result!['cleanup_confirmed'], true);
  } finally {
    await h.close();
    rmSync(readyDir, { recursive: true, force: true });
  }
});

test('missing binary is native_not_found before anything is reserved', async () => {
  const h = await createToolHarness({ config: { claudeBin: '/nonexistent/claude' } });
  try {
    const out = await h.call('claude.run', { prompt: 'x', cwd: h.dir });
    assert.equal(out.error?.code, 'native_not_found');
    const list = await h.call('claude.run.list', {});
    assert.equal(arrAt(list.result, 'runs').length, 0);
  } finally {
    await h.close();
  }
});

test('version mismatch is reported naming both versions', async () => {
  const h = await createToolHarness({ env: { FAKE_CLAUDE_VERSION: '9.9.9' } });
  try {
    const out = await h.call('claude.run', { prompt: 'x', cwd: h.dir });
    assert.equal(out.error?.code, 'native_version_mismatch');
    assert.match(String(out.error?.message), /9\.9\.9/);
    assert.match(String(out.error?.message), /2\.1\.332/);
  } finally {
    await h.close();
  }
});

test('recursion sentinel: an adapter started inside a run refuses to run tools', async () => {
  const h = await createToolHarness({ env: { CLAUDE_RUN_MCP_ACTIVE: '1' } });
  try {
    const out = await h.call('claude.run', { prompt: 'x', cwd: h.dir });
    assert.equal(out.error?.code, 'recursion_refused');
  } finally {
    await h.close();
  }
});

test('recursion sentinel: such a server keeps no warm spare either (it would check the binary for nothing)', async () => {
  for (const [env, spare] of [
    [{ CLAUDE_RUN_MCP_ACTIVE: '1' }, false],
    [{}, true],
  ] as const) {
    const h = await createToolHarness({ env, config: { spareSupervisor: true } });
    try {
      await h.request('tools/list');
      assert.equal(h.providers.sparePid() !== null, spare, JSON.stringify(env));
    } finally {
      await h.close();
    }
  }
});

test('timeout_seconds also bounds waiting for the conversation lock: a queued run times out without spawning', async () => {
  const clock = createManualClock();
  const readyDir = mkdtempSync(join(tmpdir(), 'crm-ready-'));
  const readyFile = join(readyDir, 'ready.jsonl');
  const h = await createToolHarness({ env: { FAKE_CLAUDE_DELAY_MS: '60000', FAKE_CLAUDE_READY_FILE: readyFile }, config: { clock } });
  const id = '0b6f7c9e-3d2a-4c1b-9e8f-7a6b5c4d3e2f';
  try {
    const first = await h.call('claude.run.start', {
      prompt: '[fake:slow] hold the conversation',
      cwd: h.dir,
      session_id: id,
      timeout_seconds: 100,
    });
    await waitForReady(readyFile, 'streaming');
    const second = await h.call('claude.run.start', { prompt: 'queued behind it', cwd: h.dir, resume_session_id: id, timeout_seconds: 5 });
    const secondId = String(second.result!['run_id']);
    const queued = await h.call('claude.run.result', { run_id: secondId });
    assert.equal(queued.result!['state'], 'waiting_for_session');
    clock.advance(5_000);
    const settled = await h.call('claude.run.result', { run_id: secondId, wait_seconds: 30, detail: 'full' });
    assert.equal(settled.error?.code, 'timeout');
    assert.equal(settled.result!['exit_code'], null, 'nothing was spawned for the queued run');
    assert.equal(settled.result!['cleanup_confirmed'], true);
    const spawned = readFileSync(readyFile, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"ready":"native"'));
    assert.equal(spawned.length, 1, 'only the first run started a native process');
    await h.call('claude.run.cancel', { run_id: String(first.result!['run_id']) });
  } finally {
    await h.close();
    rmSync(readyDir, { recursive: true, force: true });
  }
});

for (const backend of BACKENDS)
  test(`${backend.name}: a wedged supervisor (SIGSTOP) is killed after the ladder deadline; the fallback ends the native and the state is honest`, async () => {
    const readyDir = mkdtempSync(join(tmpdir(), 'crm-ready-'));
    const readyFile = join(readyDir, 'ready.jsonl');
    const h = await createToolHarness({
      env: { FAKE_CLAUDE_SCENARIO: 'slow', FAKE_CLAUDE_DELAY_MS: '60000', FAKE_CLAUDE_READY_FILE: readyFile },
      config: { cleanupBackend: backend.option },
    });
    try {
      const started = await h.call('claude.run.start', { prompt: 'x', cwd: h.dir });
      const runId = String(started.result!['run_id']);
      await waitForReady(readyFile, 'streaming');
      const nativePid = num(
        jsonLines(readFileSync(readyFile, 'utf8')).find((l) => l['ready'] === 'streaming')?.['pid'],
        'pid of the streaming line',
      );
      const supervisorPid = Number(readFileSync(`/proc/${nativePid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      process.kill(supervisorPid, 'SIGSTOP');
      await h.call('claude.run.cancel', { run_id: runId });
      const out = await h.call('claude.run.result', { run_id: runId, wait_seconds: 30 });
      assert.equal(out.result!['completed'], true);
      assert.equal(out.error?.code, 'cancelled');
      if (backend.name === 'cgroup') {
        // The native was born in the run's cgroup: the adapter ends it there and the kernel proves it.
        assert.equal(out.result!['cleanup_confirmed'], true, JSON.stringify(out.result!['cleanup_error']));
        assert.equal((await h.full(runId))['cleanup_proof'], 'cgroup');
      } else {
        assert.equal(out.result!['cleanup_confirmed'], false, 'a lost supervisor cannot prove cleanup by /proc');
        assert.equal(at(out.result, 'cleanup_error', 'code'), 'supervisor_failed');
      }
      // SIGKILL is asynchronous: poll the process table with a hard deadline.
      const alive = (): boolean => {
        try {
          return !readFileSync(`/proc/${nativePid}/stat`, 'utf8').includes(') Z ');
        } catch {
          return false;
        }
      };
      await pollUntil('the fallback to end the native process', () => !alive(), { timeoutMs: 5_000 });
    } finally {
      await h.close();
      rmSync(readyDir, { recursive: true, force: true });
    }
  });
