import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { drained, flushOutput, settleUnlessStalled } from '../../lib/rpc/drain.ts';
import { createManualClock } from '../helpers/manual-clock.ts';
import { createGatedSink, settle } from './streams.ts';

describe('settleUnlessStalled', () => {
  it('resolves true when the work settles, and leaves no timer behind', async () => {
    const clock = createManualClock();
    let finish: () => void = () => {};
    const result = settleUnlessStalled(
      new Promise<void>((resolve) => {
        finish = resolve;
      }),
      () => 0,
      clock,
      100,
    );
    assert.equal(clock.pending(), 1);
    finish();
    assert.equal(await result, true);
    assert.equal(clock.pending(), 0);
  });

  it('gives up after exactly one whole window without progress; progress inside a window extends it', async () => {
    const clock = createManualClock();
    let mark = 0;
    let outcome: boolean | null = null;
    void settleUnlessStalled(new Promise(() => {}), () => mark, clock, 100).then((value) => {
      outcome = value;
    });
    clock.advance(99);
    mark++;
    clock.advance(1); // window 1 saw progress
    await settle(1);
    assert.equal(outcome, null);
    clock.advance(99);
    await settle(1);
    assert.equal(outcome, null, 'one ms before the quiet window ends');
    clock.advance(1);
    await settle(1);
    assert.equal(outcome, false);
  });
});

describe('drained / flushOutput', () => {
  it("resolves at once for an empty buffer, and only after the stream's own buffer drained otherwise", async () => {
    const sink = createGatedSink(true, 1024 * 1024);
    await drained(sink.stream);
    sink.stream.write('abc\n');
    let done = false;
    const clock = createManualClock();
    const flushing = flushOutput(sink.stream, clock, 100).then((value) => {
      done = value;
    });
    await settle();
    assert.equal(done, false);
    sink.release();
    await flushing;
    assert.equal(done, true);
  });

  it('a reader that never drains: flushOutput gives up after the stall window', async () => {
    const sink = createGatedSink(true, 1024 * 1024);
    sink.stream.write('abc\n');
    const clock = createManualClock();
    const flushing = flushOutput(sink.stream, clock, 100);
    clock.advance(100);
    assert.equal(await flushing, false);
    sink.stream.destroy(); // the pending write callback resolves nothing further; drained() let go on close
    await drained(sink.stream);
  });
});
