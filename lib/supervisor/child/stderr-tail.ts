/** Keeps only the last maxBytes of a byte stream (native stderr), plus the total byte count. */
export interface ByteTail {
  push(chunk: Buffer): void;
  /** The kept bytes decoded as UTF-8; a character cut at the front is dropped, not mangled. */
  text(): string;
  totalBytes(): number;
}

export function createByteTail(maxBytes: number): ByteTail {
  const ring = Buffer.alloc(maxBytes);
  let total = 0;
  return {
    push(chunk) {
      const bytes = chunk.length > maxBytes ? chunk.subarray(chunk.length - maxBytes) : chunk;
      const kept = Math.min(total, maxBytes);
      // Shift left to make room, then append: O(maxBytes) per chunk with a fixed buffer.
      const keep = Math.min(kept, maxBytes - bytes.length);
      ring.copyWithin(0, kept - keep, kept);
      bytes.copy(ring, keep);
      total += chunk.length;
    },
    text() {
      const kept = ring.subarray(0, Math.min(total, maxBytes));
      let startAt = 0;
      if (total > maxBytes) while (startAt < kept.length && startAt < 3 && ((kept[startAt] ?? 0) & 0xc0) === 0x80) startAt++;
      return kept.subarray(startAt).toString('utf8');
    },
    totalBytes: () => total,
  };
}
