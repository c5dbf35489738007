// Open runs (keep_open) through the real tool providers, real supervisors and the fake CLI reading stream-json
// input: several turns in one native process and one conversation (checked on the process table), messages
// queued during a turn and answered in order, the queue bound, close / release / idle bound / turn limit /
// cancel each ending the run with its cleanup proven and the native gone, the budget charged per turn, and
// every refusal of claude.run.send with nothing written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JsonObject } from '../../lib/util/json.ts';
import { MAX_QUEUED_MESSAGES } from '../../lib/runs/turns.ts';
import { CAPABILITIES_URI } from '../../lib/tools/resources.ts';
import { identify, isRunning, waitForGone } from '../helpers/proc.ts';
import { at, obj, objs, parseObj, str } from '../helpers/typed-results.ts';
import type { ToolCallResult } from '../helpers/tool-harness.ts';
import { createSessionHarness, waitUntil, type SessionHarness } from '../sessions/helpers.ts';
import type { ProcessIdentity } from '../../lib/supervisor/protocol.ts';

const FIRST_ANSWER = 'Hi! I am a fake Claude.';

/** The one native process of a run (its 'native' ready line): exactly one, or the spec fails. */
function onlyNative(h: SessionHarness): ProcessIdentity {
  const natives = h.lines().filter((l) => l.ready === 'native');
  assert.equal(natives.length, 1, `one native process, got ${natives.length}`);
  const id = identify(natives[0]!.pid);
  assert.ok(id !== null, 'the native process is on the process table');
  return id;
}

/** claude.run.result waiting until the open run is idle again (or settled). */
async function untilQuiet(h: SessionHarness, runId: string): Promise<ToolCallResult> {
  return h.call('claude.run.result', { run_id: runId, wait_seconds: 30 });
}

async function idleAnswer(h: SessionHarness, runId: string): Promise<string> {
  const out = await untilQuiet(h, runId);
  assert.equal(out.result?.['state'], 'idle', `idle after the turn: ${out.text}`);
  assert.ok(out.text.endsWith(`\n\n${String(out.result?.['result'])}`), 'the text content ends with the latest answer');
  return String(out.result?.['result']);
}

const openOf = (view: JsonObject | null): JsonObject => obj(view?.['open'], 'open');
const codeOf = (out: ToolCallResult): string | undefined => out.error?.code;

test('two and three turns in one native process and one conversation; close ends it with cleanup proven', async () => {
  const h = await createSessionHarness();
  try {
    const runId = await h.start({ prompt: 'first', cwd: h.dir, keep_open: true });
    assert.equal(await idleAnswer(h, runId), FIRST_ANSWER);
    const native = onlyNative(h);
    assert.ok(isRunning(native), 'the native process waits, alive, between turns');
    const listed = objs(at((await h.call('claude.run.list', {})).result, 'runs'), 'runs');
    assert.deepEqual([listed[0]?.['state'], listed[0]?.['completed']], ['idle', false]);

    const sent = await h.call('claude.run.send', { run_id: runId, message: 'second' });
    assert.deepEqual([sent.isError, sent.result?.['turn'], sent.result?.['queued']], [false, 2, false]);
    assert.equal(await idleAnswer(h, runId), 'turn 2: second');
    await h.call('claude.run.send', { run_id: runId, message: 'third' });
    assert.equal(await idleAnswer(h, runId), 'turn 3: third');
    assert.deepEqual(onlyNative(h), native, 'still the same process after three turns');
    assert.deepEqual(
      h
        .lines()
        .filter((l) => l.ready === 'idle')
        .map((l) => l.pid),
      [native.pid, native.pid, native.pid],
    );

    const live = await h.full(runId);
    const turns = objs(live['turns'], 'turns');
    assert.deepEqual(
      turns.map((t) => [t['turn'], t['result'], t['is_error'], t['subtype']]),
      [
        [1, FIRST_ANSWER, false, 'success'],
        [2, 'turn 2: second', false, 'success'],
        [3, 'turn 3: third', false, 'success'],
      ],
    );
    const sessions = new Set(turns.map((t) => t['session_id']));
    assert.equal(sessions.size, 1, 'one session id across the turns');
    assert.ok(
      turns.every((t) => typeof t['cost_usd'] === 'number' && t['usage'] !== null),
      'usage and cost per turn',
    );
    assert.deepEqual([openOf(live)['turns_total'], openOf(live)['phase'], openOf(live)['queued']], [3, 'idle', 0]);
    const events = await h.call('claude.run.events', { run_id: runId, limit: 256 });
    const results = objs(events.result?.['events'], 'events').filter((e) => obj(e['event'], 'event')['type'] === 'result');
    assert.equal(results.length, 3, 'the event ring spans the whole conversation');

    const closed = await h.call('claude.run.close', { run_id: runId });
    assert.equal(closed.result?.['close_requested'], true);
    const done = await h.settled(runId);
    assert.deepEqual(
      [done.result['completed'], done.result['is_error'], done.result['result'], done.result['cleanup_confirmed']],
      [true, false, 'turn 3: third', true],
    );
    assert.deepEqual([openOf(done.result)['close_reason'], done.result['session_id']], ['close', [...sessions][0]]);
    await waitForGone([native]);
    assert.equal(h.lines().find((l) => l.ready === 'exit')?.code, 0, 'the native exited by itself on EOF');

    const late = await h.call('claude.run.send', { run_id: runId, message: 'too late' });
    assert.equal(codeOf(late), 'run_not_open');
  } finally {
    await h.close();
  }
});

test('messages sent during a turn wait and are answered in order; one past the queue bound is send_queue_full', async () => {
  const side = mkdtempSync(join(tmpdir(), 'crm-open-gate-'));
  const gate = join(side, 'gate');
  const h = await createSessionHarness({ FAKE_CLAUDE_GATE_FILE: gate, FAKE_CLAUDE_SLOW_EVENTS: '1', FAKE_CLAUDE_DELAY_MS: '1' });
  try {
    const runId = await h.start({ prompt: '[fake:slow] held', cwd: h.dir, keep_open: true });
    await waitUntil('the first turn streaming', () => h.lines().some((l) => l.ready === 'streaming'));
    for (let i = 0; i < MAX_QUEUED_MESSAGES; i++) {
      const out = await h.call('claude.run.send', { run_id: runId, message: `m${i}` });
      assert.deepEqual([out.result?.['turn'], out.result?.['queued'], out.result?.['queued_ahead']], [i + 2, true, i]);
    }
    const over = await h.call('claude.run.send', { run_id: runId, message: 'one too many' });
    assert.deepEqual([over.isError, codeOf(over)], [true, 'send_queue_full']);
    assert.equal(h.lines().filter((l) => l.ready === 'idle').length, 0, 'nothing was answered yet: nothing interleaved');
    writeFileSync(gate, '');
    const quiet = await untilQuiet(h, runId);
    assert.equal(quiet.result?.['state'], 'idle');
    const turns = objs((await h.full(runId))['turns'], 'turns').map((t) => t['result']);
    assert.deepEqual(turns, [FIRST_ANSWER, ...Array.from({ length: MAX_QUEUED_MESSAGES }, (_, i) => `turn ${i + 2}: m${i}`)]);
    onlyNative(h);
    await h.call('claude.run.close', { run_id: runId });
    assert.equal((await h.settled(runId)).result['cleanup_confirmed'], true);
  } finally {
    await h.close();
    rmSync(side, { recursive: true, force: true });
  }
});

test('the idle bound ends an idle run; the turn limit ends it after its last turn and refuses a send past it', async () => {
  const h = await createSessionHarness();
  try {
    const idleRun = await h.start({ prompt: 'idle', cwd: h.dir, keep_open: true, open_idle_seconds: 1 });
    const limited = await h.start({ prompt: 'limited', cwd: h.dir, keep_open: true, turn_limit: 2 });
    const idleDone = await h.settled(idleRun);
    assert.deepEqual(
      [
        idleDone.result['is_error'],
        idleDone.result['result'],
        openOf(idleDone.result)['close_reason'],
        idleDone.result['cleanup_confirmed'],
      ],
      [false, FIRST_ANSWER, 'idle_bound', true],
    );

    await idleAnswer(h, limited);
    const second = await h.call('claude.run.send', { run_id: limited, message: 'last' });
    assert.equal(second.isError, false);
    const past = await h.call('claude.run.send', { run_id: limited, message: 'past the limit' });
    assert.equal(codeOf(past), 'turn_limit_reached');
    const limitDone = await h.settled(limited);
    assert.deepEqual(
      [limitDone.result['result'], openOf(limitDone.result)['close_reason'], openOf(limitDone.result)['turns_total']],
      ['turn 2: last', 'turn_limit', 2],
    );
    const natives = h.lines().filter((l) => l.ready === 'native');
    assert.equal(natives.length, 2);
    await waitForGone(natives.map((l) => identify(l.pid)).filter((id): id is ProcessIdentity => id !== null));
    const exits = natives.map((n) => h.lines().find((l) => l.ready === 'exit' && l.pid === n.pid)?.code);
    assert.deepEqual(exits, [0, 0], 'both exited by themselves on EOF');
  } finally {
    await h.close();
  }
});

test('cancel of an idle open run closes its stdin (cancel_step close); release of another closes it first', async () => {
  const h = await createSessionHarness();
  try {
    const cancelled = await h.start({ prompt: 'to cancel', cwd: h.dir, keep_open: true });
    await idleAnswer(h, cancelled);
    const native = onlyNative(h);
    await h.call('claude.run.cancel', { run_id: cancelled });
    const done = await h.settled(cancelled);
    assert.deepEqual(
      [done.result['cancelled'], done.result['cancel_step'], done.result['cleanup_confirmed'], openOf(done.result)['close_reason']],
      [true, 'close', true, 'cancel'],
    );
    await waitForGone([native]);
    assert.equal(h.lines().find((l) => l.ready === 'exit' && l.pid === native.pid)?.code, 0, 'it exited by itself, no signal');

    const released = await h.start({ prompt: 'to release', cwd: h.dir, keep_open: true });
    await idleAnswer(h, released);
    const out = await h.call('claude.run.release', { run_id: released });
    assert.deepEqual([out.isError, out.result?.['released']], [false, true]);
    const second = h
      .lines()
      .filter((l) => l.ready === 'native')
      .at(-1)!;
    assert.ok(
      h.lines().some((l) => l.ready === 'exit' && l.pid === second.pid),
      'its native exited before the release answered',
    );
    assert.equal(codeOf(await h.call('claude.run.send', { run_id: released, message: 'x' })), 'run_not_found');
  } finally {
    await h.close();
  }
});

test('claude.run.send refusals: a one-turn run, an unknown run, an oversized message; close of a one-turn run', async () => {
  const h = await createSessionHarness();
  try {
    const oneTurn = await h.start({ prompt: 'once', cwd: h.dir });
    const one = await h.settled(oneTurn);
    assert.equal(one.result['open'], null, 'a one-turn run has no open report');
    assert.equal(one.result['turns'], null);
    const notOpen = await h.call('claude.run.send', { run_id: oneTurn, message: 'more' });
    assert.deepEqual([codeOf(notOpen), notOpen.error?.path], ['run_not_open', '/run_id']);
    assert.equal(codeOf(await h.call('claude.run.close', { run_id: oneTurn })), 'run_not_open');
    assert.equal(codeOf(await h.call('claude.run.send', { run_id: 'run_AAAAAAAAAAAAAAAAAAAAAA', message: 'x' })), 'run_not_found');
    const idleOpen = await h.start({ prompt: 'open', cwd: h.dir, keep_open: true });
    await idleAnswer(h, idleOpen);
    const openPid = h.lines().find((l) => l.ready === 'session' && l.prompt === 'open')!.pid;
    const big = await h.call('claude.run.send', { run_id: idleOpen, message: 'x'.repeat(1024 * 1024 + 1) });
    assert.deepEqual([codeOf(big), big.error?.path], ['invalid_arguments', '/message']);
    assert.equal(h.lines().filter((l) => l.ready === 'idle' && l.pid === openPid).length, 1, 'nothing was written');
    const keepOpenOnRun = await h.call('claude.run', { prompt: 'sync', cwd: h.dir, keep_open: true });
    assert.equal(keepOpenOnRun.isError, true, 'claude.run does not take keep_open');
    const idleWithout = await h.call('claude.run.start', { prompt: 'x', cwd: h.dir, open_idle_seconds: 5 });
    assert.deepEqual([codeOf(idleWithout), idleWithout.error?.path], ['invalid_arguments', '/open_idle_seconds']);
    const overMax = await h.call('claude.run.start', { prompt: 'x', cwd: h.dir, keep_open: true, open_idle_seconds: 3601 });
    assert.deepEqual([codeOf(overMax), overMax.error?.path], ['invalid_arguments', '/open_idle_seconds'], 'over the operator maximum');
    await h.call('claude.run.close', { run_id: idleOpen });
    await h.settled(idleOpen);
  } finally {
    await h.close();
  }
});

test('the budget charges every turn as it ends; a send once it is spent is refused with nothing written', async () => {
  const h = await createSessionHarness({ FAKE_CLAUDE_COST_USD: '0.1' }, { budgetUsd: 0.2 });
  const budget = async (): Promise<JsonObject> => {
    const read = await h.request('resources/read', { uri: CAPABILITIES_URI });
    const text = str(at(obj(read['result'], 'result'), 'contents', 0, 'text'), 'capabilities text');
    return obj(parseObj(text, 'capabilities')['budget'], 'budget');
  };
  try {
    const runId = await h.start({ prompt: 'paid', cwd: h.dir, keep_open: true });
    await idleAnswer(h, runId);
    assert.deepEqual([(await budget())['spent_usd'], (await budget())['runs_reserving']], [0.1, 1], 'turn 1 charged while the run is open');
    await h.call('claude.run.send', { run_id: runId, message: 'again' });
    await idleAnswer(h, runId);
    assert.equal((await budget())['spent_usd'], 0.2, 'turn 2 charged');
    const refused = await h.call('claude.run.send', { run_id: runId, message: 'over budget' });
    assert.deepEqual([refused.isError, codeOf(refused)], [true, 'server_budget_exhausted']);
    assert.equal(h.lines().filter((l) => l.ready === 'idle').length, 2, 'nothing was written');
    assert.equal(openOf(await h.full(runId))['turns_total'], 2);
    await h.call('claude.run.close', { run_id: runId });
    await h.settled(runId);
    assert.deepEqual([(await budget())['spent_usd'], (await budget())['runs_reserving']], [0.2, 0], 'nothing more at settle');
  } finally {
    await h.close();
  }
});

test('a native that dies between turns: the run settles with its cleanup proven, and a send after is run_not_open', async () => {
  const h = await createSessionHarness();
  try {
    const runId = await h.start({ prompt: 'to die', cwd: h.dir, keep_open: true });
    await idleAnswer(h, runId);
    const native = onlyNative(h);
    // Our own fake, identified by pid and start time on the process table, and still that process now.
    assert.ok(isRunning(native));
    process.kill(native.pid, 'SIGKILL');
    const done = await h.settled(runId);
    assert.deepEqual(
      [done.result['completed'], done.result['is_error'], done.result['cleanup_confirmed'], openOf(done.result)['close_reason']],
      [true, true, true, 'run_ended'],
    );
    assert.equal(done.result['signal'], 'SIGKILL');
    await waitForGone([native]);
    const after = await h.call('claude.run.send', { run_id: runId, message: 'anyone?' });
    assert.equal(codeOf(after), 'run_not_open');
  } finally {
    await h.close();
  }
});

test('the operator maximum (--max-open-idle-seconds) bounds open_idle_seconds in the schema and its default', async () => {
  const h = await createSessionHarness({}, { maxOpenIdleSeconds: 120 });
  try {
    const listed = await h.request('tools/list', {});
    const tools = objs(at(obj(listed['result'], 'result'), 'tools'), 'tools');
    const schemaOf = (name: string): JsonObject =>
      obj(
        at(
          tools.find((t) => t['name'] === name),
          'inputSchema',
          'properties',
        ),
        name,
      );
    const idle = obj(schemaOf('claude.run.start')['open_idle_seconds'], 'open_idle_seconds');
    assert.deepEqual([idle['maximum'], idle['default']], [120, 120], 'the default 300 is capped by a lower maximum');
    assert.equal(schemaOf('claude.run')['keep_open'], undefined, 'claude.run waits for one answer: no keep_open');
    const over = await h.call('claude.run.start', { prompt: 'x', cwd: h.dir, keep_open: true, open_idle_seconds: 121 });
    assert.deepEqual([codeOf(over), over.error?.path], ['invalid_arguments', '/open_idle_seconds']);
  } finally {
    await h.close();
  }
});
