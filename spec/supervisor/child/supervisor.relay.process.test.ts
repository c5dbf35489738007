/** Native stdout is relayed byte-for-byte whatever its size; native stderr is kept as a bounded tail. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { STDERR_TAIL_MAX_BYTES, REPORT_MAX_BYTES } from '../../../lib/supervisor/protocol.ts';
import { baseEnv, FAKE_CLAUDE, startFake, stdoutEvents } from '../harness.ts';
import { at, lookup, str } from '../../helpers/typed-results.ts';

const HUGE_LINE_BYTES = 2 * 1024 * 1024;

test('a 2 MiB line is relayed intact', async () => {
  const fake = startFake('huge_line');
  try {
    const outcome = await fake.run.done;
    assert.equal(outcome.cleanup?.confirmed, true);
    const events = stdoutEvents(fake.stdout());
    const huge = events.find((e) => JSON.stringify(e).length > HUGE_LINE_BYTES);
    assert.ok(huge);
    assert.equal(str(at(huge, 'event', 'delta', 'text')).length, HUGE_LINE_BYTES);
    assert.equal(events.at(-1)?.['type'], 'result');
    // Same byte count as the fixture printing straight to a pipe (ids and timestamps are fixed-width).
    const direct = spawnSync(FAKE_CLAUDE, ['-p', '--output-format', 'stream-json', '--verbose', '--', 'hello'], {
      env: baseEnv({ FAKE_CLAUDE_SCENARIO: 'huge_line' }),
      cwd: fake.dir,
      maxBuffer: 64 * 1024 * 1024,
    });
    assert.equal(fake.stdout().length, direct.stdout.length);
  } finally {
    fake.dispose();
  }
});

test('a flood of 20000 events arrives complete and in order', async () => {
  const fake = startFake('flood', { env: { FAKE_CLAUDE_FLOOD_EVENTS: '20000' } });
  try {
    const outcome = await fake.run.done;
    assert.equal(outcome.cleanup?.confirmed, true);
    const deltas = stdoutEvents(fake.stdout()).filter((e) => lookup(e, 'event', 'type') === 'content_block_delta');
    assert.equal(deltas.length, 20000);
    assert.equal(at(deltas[19999], 'event', 'delta', 'text'), 'd19999 ');
  } finally {
    fake.dispose();
  }
});

test('native stderr: total bytes counted, tail bounded to STDERR_TAIL_MAX_BYTES, report within REPORT_MAX_BYTES', async () => {
  const bytes = 100 * 1024;
  const fake = startFake('stderr_flood', { env: { FAKE_CLAUDE_HUGE_BYTES: String(bytes) } });
  try {
    const outcome = await fake.run.done;
    assert.equal(outcome.cleanup?.confirmed, true);
    assert.equal(outcome.stderrBytes, bytes + 'END\n'.length);
    assert.equal(Buffer.byteLength(outcome.stderrTail), STDERR_TAIL_MAX_BYTES);
    assert.ok(outcome.stderrTail.endsWith('eeeEND\n'));
    assert.ok(Buffer.byteLength(JSON.stringify(outcome.cleanup)) < REPORT_MAX_BYTES);
  } finally {
    fake.dispose();
  }
});

test('native stderr exactly at the tail bound is kept whole', async () => {
  const fake = startFake('stderr_flood', { env: { FAKE_CLAUDE_HUGE_BYTES: String(STDERR_TAIL_MAX_BYTES - 4) } });
  try {
    const outcome = await fake.run.done;
    assert.equal(outcome.stderrBytes, STDERR_TAIL_MAX_BYTES);
    assert.equal(outcome.stderrTail, 'e'.repeat(STDERR_TAIL_MAX_BYTES - 4) + 'END\n');
  } finally {
    fake.dispose();
  }
});
