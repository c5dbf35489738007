/** The bounded byte-level line splitter: framing under any chunking, the bound exactly and one past it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLineSplitter, INITIAL_BYTES } from '../../lib/util/line-splitter.ts';

interface Seen {
  readonly lines: string[];
  readonly oversize: number[];
}

function splitAll(chunks: readonly Buffer[], maxLineBytes: number, end = true): Seen {
  const seen: Seen = { lines: [], oversize: [] };
  const splitter = createLineSplitter({
    maxLineBytes,
    onLine: (frame) => {
      seen.lines.push(frame.toString('utf8'));
    },
    onOversize: (bytes) => {
      seen.oversize.push(bytes);
    },
  });
  for (const chunk of chunks) splitter.push(chunk);
  if (end) splitter.end();
  return seen;
}

function chunked(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(Buffer.from(bytes.subarray(i, i + size)));
  return out;
}

const TEXT = Buffer.from('{"a":"héllo ✓ 𝄞"}\r\nplain\n\n  \nlast-without-newline', 'utf8');

test('the same frames whatever the chunk size, multibyte characters split anywhere, CR stripped', () => {
  const expected = ['{"a":"héllo ✓ 𝄞"}', 'plain', '', '  ', 'last-without-newline'];
  for (let size = 1; size <= TEXT.length; size++) {
    assert.deepEqual(splitAll(chunked(TEXT, size), 1024), { lines: expected, oversize: [] }, `chunk size ${size}`);
  }
});

test('a frame exactly at the bound passes, one byte past is reported with its size, in one chunk or many', () => {
  const max = 100;
  const at = Buffer.from(`${'x'.repeat(max)}\n${'y'.repeat(max + 1)}\nok\n`);
  for (const size of [at.length, 7, 1]) {
    const seen = splitAll(chunked(at, size), max);
    assert.deepEqual(seen.lines, ['x'.repeat(max), 'ok'], `chunk size ${size}`);
    assert.deepEqual(seen.oversize, [max + 1], `chunk size ${size}`);
  }
});

test('an oversized frame is discarded up to its newline and reported once, whatever its length', () => {
  const big = Buffer.concat([Buffer.alloc(300_000, 0x61), Buffer.from('\nafter\n')]);
  for (const size of [big.length, 65_536, 4096]) {
    assert.deepEqual(splitAll(chunked(big, size), 1000), { lines: ['after'], oversize: [300_000] }, `chunk size ${size}`);
  }
});

test('an unterminated frame is flushed by end(); an oversized one is reported by end()', () => {
  assert.deepEqual(splitAll([Buffer.from('abc')], 10), { lines: ['abc'], oversize: [] });
  assert.deepEqual(splitAll([Buffer.from('abc')], 10, false), { lines: [], oversize: [] });
  assert.deepEqual(splitAll([Buffer.from('0123456789A')], 10), { lines: [], oversize: [11] });
});

test('a frame spanning many chunks grows the buffer past its initial size and arrives intact', () => {
  const line = 'z'.repeat(200 * 1024);
  const seen = splitAll(chunked(Buffer.from(`${line}\nnext\n`), 1000), 1024 * 1024);
  assert.equal(seen.lines.length, 2);
  assert.equal(seen.lines[0], line);
  assert.equal(seen.lines[1], 'next');
});

test('frames stay correct after later pushes (views of chunks, copies of assembled frames)', () => {
  const frames: Buffer[] = [];
  const splitter = createLineSplitter({
    maxLineBytes: 64,
    onLine: (frame) => {
      frames.push(frame);
    },
    onOversize: () => {},
  });
  splitter.push(Buffer.from('one\ntw'));
  splitter.push(Buffer.from('o\nthree\n'));
  splitter.push(Buffer.from('four\n'));
  assert.deepEqual(
    frames.map((f) => f.toString()),
    ['one', 'two', 'three', 'four'],
  );
});

test('an assembled frame that grew the buffer leaves with it: frames kept without copying stay intact', () => {
  const frames: Buffer[] = [];
  const splitter = createLineSplitter({
    maxLineBytes: 1024 * 1024,
    onLine: (frame) => {
      frames.push(frame);
    },
    onOversize: () => {},
  });
  const first = 'a'.repeat(150 * 1024);
  const second = 'b'.repeat(100 * 1024);
  const stream = Buffer.from(`${first}\n${second}\nsmall-${'c'.repeat(100)}\n${'d'.repeat(70 * 1024)}\ntail`);
  for (const chunk of chunked(stream, 4096)) splitter.push(chunk);
  splitter.end();
  // Checked only now: every later frame was assembled after the earlier ones were handed out.
  assert.deepEqual(
    frames.map((f) => f.toString()),
    [first, second, `small-${'c'.repeat(100)}`, 'd'.repeat(70 * 1024), 'tail'],
  );
});

test('at the starting buffer size an assembled frame is copied out (the buffer is reused); one byte more and it leaves with its buffer', () => {
  for (const size of [INITIAL_BYTES, INITIAL_BYTES + 1]) {
    const frames: Buffer[] = [];
    const splitter = createLineSplitter({
      maxLineBytes: 1024 * 1024,
      onLine: (frame) => {
        frames.push(frame);
      },
      onOversize: () => {},
    });
    const lines = ['p', 'q', 'r'].map((c) => c.repeat(size));
    for (const chunk of chunked(Buffer.from(`${lines.join('\n')}\n`), 1000)) splitter.push(chunk);
    assert.deepEqual(
      frames.map((f) => f.toString()),
      lines,
      `frames of ${size} bytes`,
    );
  }
});
