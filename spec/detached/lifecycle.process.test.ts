// Detached runs in process (real supervisors, fake CLI): start returns at once, list, result long-poll,
// cancel (group killed, outcome on later reads), release rules and run_not_found wording.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../lib/util/json.ts';
import { RUN_ID_PATTERN } from '../../lib/runs/ids.ts';
import { readProcStat } from '../../lib/process/proc-table.ts';
import { identify, isRunning } from '../helpers/proc.ts';
import { arrAt, at, firstText, objAt, objs, parseObj, rpcResult } from '../helpers/typed-results.ts';
import { createSessionHarness, waitUntil, type SessionHarness } from '../sessions/helpers.ts';

const HANG = '[fake:sigint_result] wait for a signal';
const codeOf = (out: { error: JsonObject | null }): string => String(out.error?.['code']);

async function nativePid(h: SessionHarness, prompt: string): Promise<number> {
  await waitUntil(`native process for ${prompt}`, () => h.lines().some((l) => l.ready === 'session' && l.prompt === prompt));
  return h.lines().find((l) => l.ready === 'session' && l.prompt === prompt)!.pid;
}

test('start returns at once; list, result long-poll, cancel, and release of a detached run', async () => {
  const h = await createSessionHarness();
  try {
    const before = performance.now();
    const started = await h.call('claude.run.start', { prompt: HANG, cwd: h.dir });
    assert.ok(performance.now() - before < 2000, 'start does not wait for the run');
    assert.equal(started.isError, false);
    const runId = String(started.result?.['run_id']);
    assert.match(runId, RUN_ID_PATTERN);
    assert.equal(started.result?.['completed'], false);
    assert.ok(['waiting_for_session', 'checking_version', 'starting', 'running'].includes(String(started.result?.['state'])));

    const pid = await nativePid(h, HANG);
    const native = identify(pid)!;
    const session = h.lines().find((l) => l.ready === 'session' && l.pid === pid)!.session;
    let item: JsonObject = {};
    let list = await h.call('claude.run.list', {});
    await waitUntil('the live session id in the listing', async () => {
      list = await h.call('claude.run.list', {});
      item = objAt(list.result, 'runs', 0);
      return item['session_id'] !== null;
    });
    assert.deepEqual(Object.keys(item).sort(), [
      'acquired_by',
      'cleanup_confirmed',
      'completed',
      'created_at',
      'run_id',
      'session_id',
      'settled_at',
      'state',
    ]);
    assert.deepEqual([item['run_id'], item['completed'], item['settled_at'], item['session_id']], [runId, false, null, session]);
    assert.deepEqual([list.result?.['retained'], list.result?.['active']], [1, 1]);

    const polled = performance.now();
    const waited = await h.call('claude.run.result', { run_id: runId, wait_seconds: 1 });
    const elapsed = performance.now() - polled;
    assert.ok(elapsed >= 950 && elapsed < 5000, `wait_seconds 1 waited ${Math.round(elapsed)} ms`);
    assert.deepEqual([waited.isError, waited.result?.['completed'], waited.result?.['state']], [false, false, 'running']);
    const immediate = await h.call('claude.run.result', { run_id: runId });
    assert.equal(immediate.result?.['completed'], false, 'wait_seconds defaults to 0');

    const active = await h.call('claude.run.release', { run_id: runId });
    assert.equal(codeOf(active), 'run_active');

    const cancel = await h.call('claude.run.cancel', { run_id: runId });
    assert.equal(cancel.isError, false);
    assert.equal(cancel.result?.['cancel_requested'], true);
    const settled = await h.settled(runId);
    assert.equal(settled.isError, true);
    assert.equal(codeOf(settled), 'cancelled');
    assert.deepEqual(
      [settled.result?.['cancelled'], settled.result?.['cleanup_confirmed'], settled.result?.['cleanup_error']],
      [true, true, null],
    );
    assert.equal(isRunning(native), false, 'the native process group was ended');
    assert.equal(at(settled.result, 'final', 'terminal_reason'), 'aborted_streaming', 'the native final event stays available');

    const again = await h.call('claude.run.cancel', { run_id: runId });
    assert.equal(again.isError, false, 'cancelling a completed run is not an error');
    assert.equal(again.result?.['cancel_requested'], false);
    assert.equal(at(again.result, 'run', 'error', 'code'), 'cancelled');

    const released = await h.call('claude.run.release', { run_id: runId });
    assert.deepEqual(released.result, { released: true, run_id: runId, session_id: settled.result?.['session_id'] });
    for (const tool of ['claude.run.result', 'claude.run.events', 'claude.run.cancel', 'claude.run.release']) {
      const gone = await h.call(tool, { run_id: runId });
      assert.equal(codeOf(gone), 'run_not_found', tool);
      assert.match(String(gone.error?.['message']), /released/, tool);
    }
    assert.deepEqual((await h.call('claude.run.list', {})).result?.['runs'], []);
  } finally {
    await h.close();
  }
});

test('result wait_seconds returns as soon as the run settles, and is bounded 0-30', async () => {
  const h = await createSessionHarness({ FAKE_CLAUDE_SLOW_EVENTS: '5', FAKE_CLAUDE_DELAY_MS: '200' });
  try {
    const runId = await h.start({ prompt: '[fake:slow] five slow events', cwd: h.dir });
    const before = performance.now();
    const out = await h.call('claude.run.result', { run_id: runId, wait_seconds: 30 });
    assert.ok(performance.now() - before < 15_000);
    assert.deepEqual(
      [out.isError, out.result?.['completed'], out.result?.['state'], out.result?.['is_error']],
      [false, true, 'completed', false],
    );
    for (const bad of [31, -1, 1.5]) {
      const rejected = await h.call('claude.run.result', { run_id: runId, wait_seconds: bad });
      assert.deepEqual([codeOf(rejected), rejected.error?.['path']], ['invalid_arguments', '/wait_seconds'], String(bad));
    }
  } finally {
    await h.close();
  }
});

test('unknown run ids are run_not_found saying so', async () => {
  const h = await createSessionHarness();
  try {
    for (const runId of ['run_AAAAAAAAAAAAAAAAAAAAAA', 'not-a-run-id']) {
      for (const tool of ['claude.run.result', 'claude.run.events', 'claude.run.cancel', 'claude.run.release']) {
        const out = await h.call(tool, { run_id: runId });
        assert.equal(codeOf(out), 'run_not_found');
        assert.match(String(out.error?.['message']), /unknown to this adapter process/);
      }
    }
  } finally {
    await h.close();
  }
});

test('a sync claude.run stays retained: its run_id reads, lists and releases like a detached one', async () => {
  const h = await createSessionHarness();
  try {
    const out = await h.call('claude.run', { prompt: 'hello', cwd: h.dir });
    const runId = String(out.result?.['run_id']);
    const read = await h.call('claude.run.result', { run_id: runId });
    assert.deepEqual(read.result, out.result, 'the same result object');
    const full = await h.full(runId);
    const events = await h.call('claude.run.events', { run_id: runId });
    assert.equal(arrAt(events.result, 'events').length, full['events_total']);
    assert.deepEqual((await h.call('claude.run.list', {})).result?.['runs'], [
      {
        run_id: runId,
        state: 'completed',
        completed: true,
        cleanup_confirmed: true,
        created_at: full['created_at'],
        settled_at: full['settled_at'],
        session_id: out.result?.['session_id'],
        acquired_by: null,
      },
    ]);
    assert.equal((await h.call('claude.run.release', { run_id: runId })).result?.['released'], true);
  } finally {
    await h.close();
  }
});

test('unconfirmed cleanup (supervisor killed, /proc tracking) keeps the run: release is cleanup_unconfirmed', async () => {
  // Only the /proc fallback leaves a killed supervisor's run unproven (a cgroup proves it: spec/faults/escape-cases.ts).
  const h = await createSessionHarness({}, { cleanupBackend: 'process_scan' });
  try {
    const invocation = '5d6e7f80-91a2-4b3c-8d4e-5f6071829304';
    const runId = await h.start({ prompt: HANG, cwd: h.dir }, { 'io.github.computer-mcp/work-invocation': invocation });
    const pid = await nativePid(h, HANG);
    const supervisor = readProcStat(pid)!.ppid;
    process.kill(supervisor, 'SIGKILL');
    const out = await h.settled(runId);
    assert.equal(out.isError, true);
    assert.equal(out.result?.['cleanup_confirmed'], false);
    assert.equal(at(out.result, 'cleanup_error', 'code'), 'supervisor_failed');
    const release = await h.call('claude.run.release', { run_id: runId });
    assert.equal(codeOf(release), 'cleanup_unconfirmed');
    const list = await h.call('claude.run.list', {});
    assert.deepEqual([list.result?.['retained'], list.result?.['active']], [1, 1], 'kept, and still counted as active');
    const work = await h.request('resources/read', { uri: 'computer-mcp://runtime/work/v1' });
    const body = parseObj(firstText(rpcResult(work), 'contents'), 'the work snapshot');
    assert.deepEqual(
      objs(body['owners'], 'owners').map((o) => [o['run_id'], o['acquired_by'], o['state'], o['ownership']]),
      [[runId, invocation, 'completed', 'uncertain']],
    );
  } finally {
    await h.close();
  }
});
