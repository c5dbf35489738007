const ELLIPSIS = '…';

/** Cuts `text` to at most maxBytes of UTF-8, on a code point boundary, marking the cut with an ellipsis. */
export function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  const budget = maxBytes - Buffer.byteLength(ELLIPSIS, 'utf8');
  if (budget <= 0) return '';
  let end = budget;
  // Back up over UTF-8 continuation bytes (10xxxxxx) so no code point is split.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8') + ELLIPSIS;
}
