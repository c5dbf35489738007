/**
 * The native's open stdin through the supervisor (stream-json input): the prompt as the first user line,
 * further lines in order while the native lives, `endInput` as the one EOF, nothing sent after it.
 * Driven by fixtures/fake-claude.mjs, which reads stream-json input as 2.1.332 does (idle after a result).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { userMessageLine } from '../../../lib/native/argv.ts';
import { existsSync, readFileSync } from 'node:fs';
import { isRunning, waitFor } from '../../helpers/proc.ts';
import { parseObj } from '../../helpers/typed-results.ts';
import { startFake, stdoutEvents } from '../harness.ts';

const STREAM_ARGS = ['-p', '--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json'];

/** The fake's `idle` readiness lines: one per finished turn, with the count of turns so far. */
function idleLines(readyFile: string): { pid: number; turns: number }[] {
  if (!existsSync(readyFile)) return [];
  return readFileSync(readyFile, 'utf8')
    .split('\n')
    .filter((l) => l.endsWith('}'))
    .map((l) => parseObj(l, 'a ready line'))
    .filter((l) => l['ready'] === 'idle')
    .map((l) => ({ pid: Number(l['pid']), turns: Number(l['turns']) }));
}

test('a kept-open stdin: the native idles after its result until input ends, then exits by itself', async () => {
  const fake = startFake('ok', { args: STREAM_ARGS, stdin: userMessageLine('first'), spec: { keepStdinOpen: true } });
  try {
    await waitFor('the first turn idles', () => idleLines(fake.readyFile)[0]);
    const spawned = fake.reports.find((r) => r.type === 'spawned');
    assert.ok(spawned?.type === 'spawned');
    assert.equal(isRunning({ pid: spawned.pid, start: spawned.start }), true, 'alive while stdin is open');
    assert.equal(stdoutEvents(fake.stdout()).filter((e) => e['type'] === 'result').length, 1);
    fake.run.endInput();
    const outcome = await fake.run.done;
    assert.deepEqual(outcome.exit, { code: 0, signal: null }, 'EOF ended it, not the ladder');
    assert.equal(outcome.cleanup?.confirmed, true);
    assert.ok(!outcome.cleanup?.steps.some((s) => s.startsWith('SIGINT')), JSON.stringify(outcome.cleanup?.steps));
  } finally {
    fake.dispose();
  }
});

test('input lines reach the native in order: a second user line is a second turn of the same process', async () => {
  const fake = startFake('ok', { args: STREAM_ARGS, stdin: userMessageLine('first'), spec: { keepStdinOpen: true } });
  try {
    await waitFor('the first turn idles', () => idleLines(fake.readyFile)[0]);
    // Split across writes: the native must see one line, whatever the chunking.
    const second = userMessageLine('second ✓');
    assert.equal(fake.run.input(second.slice(0, 7)), true);
    assert.equal(fake.run.input(second.slice(7)), true);
    await waitFor('the second turn idles', () => idleLines(fake.readyFile).find((l) => l.turns === 2));
    fake.run.endInput();
    assert.equal(fake.run.input(userMessageLine('too late')), false, 'nothing is sent after the end');
    const outcome = await fake.run.done;
    assert.deepEqual(outcome.exit, { code: 0, signal: null });
    const results = stdoutEvents(fake.stdout()).filter((e) => e['type'] === 'result');
    assert.equal(results.length, 2);
    assert.equal(results[1]?.['result'], 'turn 2: second ✓');
    assert.equal(new Set(results.map((r) => r['session_id'])).size, 1, 'one session');
    assert.equal(new Set(idleLines(fake.readyFile).map((l) => l.pid)).size, 1, 'one process');
  } finally {
    fake.dispose();
  }
});

test('a closed stdin (no keepStdinOpen) takes no input: input() is false and the prompt is all it read', async () => {
  const fake = startFake('ok', { args: ['-p', '--output-format', 'json'], stdin: 'only this' });
  try {
    assert.equal(fake.run.input('more'), false);
    const outcome = await fake.run.done;
    assert.deepEqual(outcome.exit, { code: 0, signal: null });
    assert.equal(fake.record().stdin, 'only this');
  } finally {
    fake.dispose();
  }
});

test('input after terminate is refused, and terminate still ends a native that waits on stdin', async () => {
  const fake = startFake('ok', {
    args: STREAM_ARGS,
    stdin: userMessageLine('first'),
    spec: { keepStdinOpen: true, interruptGraceMs: 1500 },
  });
  try {
    await waitFor('the first turn idles', () => idleLines(fake.readyFile)[0]);
    fake.run.terminate('cancel');
    assert.equal(fake.run.input(userMessageLine('after')), false);
    const outcome = await fake.run.done;
    assert.equal(outcome.cleanup?.confirmed, true);
    assert.ok(outcome.spawned);
    assert.equal(isRunning(outcome.spawned), false);
  } finally {
    fake.dispose();
  }
});
