// Through the official SDK client over stdio: event pages with overflow and a stale cursor, long-poll
// wait_seconds, cancel (native group ended, outcome on later reads), and every release/argument error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readProcStat } from '../../lib/process/proc-table.ts';
import { identify, isRunning } from '../helpers/proc.ts';
import { waitUntil } from '../sessions/helpers.ts';
import { startSdkServer } from './sdk-server.ts';
import { at, eventPageOf, num, objs, type EventPageView } from '../helpers/typed-results.ts';

const HANG = '[fake:sigint_result] hold until cancelled';

test('SDK: event pages under overflow, stale cursors, long-poll, cancel and release', async () => {
  // /proc tracking: the last part needs a run whose cleanup stays unproven (under a cgroup it is proven).
  const server = await startSdkServer({
    args: ['--cleanup-backend=process_scan'],
    env: { FAKE_CLAUDE_FLOOD_EVENTS: '600', FAKE_CLAUDE_SLOW_EVENTS: '400', FAKE_CLAUDE_DELAY_MS: '5' },
  });
  try {
    // A live run overflowing its 256-event ring while a client holds an early cursor.
    const live = await server.start({ prompt: '[fake:slow] stream' });
    await waitUntil('live run streaming', () => server.lines().some((l) => l.ready === 'streaming'));
    let early: EventPageView | null = null;
    await waitUntil('two events', async () => {
      early = eventPageOf((await server.call('claude.run.events', { run_id: live, limit: 2 })).result);
      return early.events.length === 2;
    });
    const polled = performance.now();
    const done = await server.call('claude.run.result', { run_id: live, wait_seconds: 30, detail: 'full' });
    assert.ok(performance.now() - polled < 29_000, 'the long poll returned when the run settled');
    assert.deepEqual([done.isError, done.result?.['completed']], [false, true]);
    const total = num(at(done.result, 'events_total'), 'events_total');
    const stale = eventPageOf((await server.call('claude.run.events', { run_id: live, cursor: early!.next_cursor, limit: 10 })).result);
    assert.equal(stale.stale_cursor, true);
    assert.equal(stale.missed_events, total - 256 - 2);
    assert.equal(stale.events[0]!.seq, total - 255);

    const flood = await server.start({ prompt: '[fake:flood] deltas' });
    const flooded = await server.settled(flood);
    const floodTotal = num(at(flooded.result, 'events_total'), 'events_total');
    assert.ok(floodTotal > 600);
    let page = eventPageOf((await server.call('claude.run.events', { run_id: flood, limit: 256 })).result);
    assert.deepEqual([page.events.length, page.missed_events, page.has_more, page.stale_cursor], [256, floodTotal - 256, false, false]);
    page = eventPageOf((await server.call('claude.run.events', { run_id: flood, cursor: page.next_cursor })).result);
    assert.deepEqual([page.events.length, page.has_more, page.missed_events], [0, false, 0]);

    for (const [args, path] of [
      [{ cursor: 'garbage' }, '/cursor'],
      [{ cursor: early!.next_cursor }, '/cursor'],
      [{ limit: 0 }, '/limit'],
      [{ limit: 257 }, '/limit'],
    ] as const) {
      const out = await server.call('claude.run.events', { run_id: flood, ...args });
      assert.deepEqual([out.error?.['code'], out.error?.['path']], ['invalid_arguments', path], JSON.stringify(args));
    }
    const wait31 = await server.call('claude.run.result', { run_id: flood, wait_seconds: 31 });
    assert.deepEqual([wait31.error?.['code'], wait31.error?.['path']], ['invalid_arguments', '/wait_seconds']);

    // Cancel: the long poll of a hanging run times out undisturbed, cancel ends the group.
    const hang = await server.start({ prompt: HANG });
    await waitUntil('hanging run ready', () => server.lines().some((l) => l.ready === 'handlers'));
    const native = identify(server.lines().find((l) => l.ready === 'handlers')!.pid)!;
    const before = performance.now();
    const pending = await server.call('claude.run.result', { run_id: hang, wait_seconds: 1 });
    assert.ok(performance.now() - before >= 950);
    assert.deepEqual([pending.isError, pending.result?.['completed'], pending.result?.['state']], [false, false, 'running']);
    assert.equal((await server.call('claude.run.release', { run_id: hang })).error?.['code'], 'run_active');
    assert.equal((await server.call('claude.run.cancel', { run_id: hang })).result?.['cancel_requested'], true);
    const cancelled = await server.settled(hang);
    assert.deepEqual(
      [cancelled.error?.['code'], cancelled.result?.['cancelled'], cancelled.result?.['cleanup_confirmed']],
      ['cancelled', true, true],
    );
    assert.equal(isRunning(native), false);
    assert.equal((await server.call('claude.run.cancel', { run_id: hang })).isError, false, 'cancel after completion is not an error');
    assert.equal((await server.call('claude.run.release', { run_id: hang })).result?.['released'], true);
    assert.equal((await server.call('claude.run.result', { run_id: hang })).error?.['code'], 'run_not_found');

    // Unconfirmed cleanup: the supervisor dies without its report; the run stays retained.
    const orphan = await server.start({ prompt: `${HANG} again` });
    await waitUntil('second hanging run ready', () => server.lines().filter((l) => l.ready === 'handlers').length === 2);
    const pid = server.lines().filter((l) => l.ready === 'handlers')[1]!.pid;
    process.kill(readProcStat(pid)!.ppid, 'SIGKILL');
    const lost = await server.settled(orphan);
    assert.equal(lost.result?.['cleanup_confirmed'], false);
    assert.equal((await server.call('claude.run.release', { run_id: orphan })).error?.['code'], 'cleanup_unconfirmed');
    assert.equal(
      objs(at((await server.call('claude.run.list', {})).result, 'runs'), 'runs').some((r) => r['run_id'] === orphan),
      true,
      'kept',
    );
  } finally {
    await server.close();
  }
});
