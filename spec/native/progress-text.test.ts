import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_PROGRESS_BYTES, progressText, truncateUtf8 } from '../../lib/native/progress-text.ts';
import { parseNativeEvent } from '../../lib/native/events.ts';
import { lines } from '../runs/capture.ts';

function texts(name: string): string[] {
  return lines(name).map((line) => {
    const parsed = parseNativeEvent(line);
    assert.ok(parsed.ok);
    return progressText(parsed.kind, parsed.event);
  });
}

test('real golden turn: one short line per event with type and excerpt', () => {
  const out = texts('golden-ok-stream-partial');
  assert.equal(out[0], 'system/init model=claude-opus-5-5 session=89091831-a95e-44bd-95a5-40cc9d0c6251');
  assert.equal(out[1], 'system/status requesting');
  assert.equal(out[2], 'stream_event/message_start');
  assert.equal(out[3], 'stream_event/content_block_start text');
  assert.match(out[4] ?? '', /^stream_event\/content_block_delta text_delta \d+ chars: /);
  assert.equal(out[7], 'assistant text: Hi! I am a fake Claude.');
  assert.equal(out.at(-1), 'result/success is_error=false turns=1 Hi! I am a fake Claude.');
});

test('real tool turn, retries, denials and errors are named', () => {
  const tool = texts('golden-tool-turn-partial');
  assert.ok(
    tool.some((t) => /^stream_event\/content_block_start tool_use \w+/.test(t)),
    tool.join('\n'),
  );
  assert.ok(tool.some((t) => t.startsWith('stream_event/content_block_delta input_json_delta')));
  assert.ok(tool.some((t) => /^assistant tool_use \w+/.test(t)));
  assert.ok(tool.some((t) => t.startsWith('user tool_result')));
  assert.deepEqual(
    texts('err-def-http_529').filter((t) => t.startsWith('system/api_retry')),
    [
      'system/api_retry attempt 1/10 status=529 overloaded retry in 601 ms',
      'system/api_retry attempt 2/10 status=529 overloaded retry in 1048 ms',
    ],
  );
  assert.ok(tool.includes('stream_event/content_block_start tool_use Bash'));
  assert.ok(tool.includes('stream_event/message_delta stop_reason=tool_use'));
  assert.ok(texts('perm-dontAsk__bash_redirect').some((t) => /^system\/permission_denied Bash Permission to use Bash/.test(t)));
  assert.ok(texts('err-r0-http_401').some((t) => t.startsWith('assistant error authentication_failed text: Failed to authenticate')));
  for (const [line, text] of [
    ['{"type":"system","subtype":"model_fallback"}', 'system/model_fallback'],
    ['{"type":"rate_limit_event"}', 'rate_limit_event'],
    ['{}', 'event'],
  ] as const) {
    const parsed = parseNativeEvent(line);
    assert.ok(parsed.ok);
    assert.equal(progressText(parsed.kind, parsed.event), text);
  }
});

test('messages are single-line and at most MAX_PROGRESS_BYTES of UTF-8', () => {
  const parsed = parseNativeEvent(
    JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'a\nb\r\n' + '🎉'.repeat(2000) }] } }),
  );
  assert.ok(parsed.ok);
  const text = progressText(parsed.kind, parsed.event);
  assert.ok(Buffer.byteLength(text) <= MAX_PROGRESS_BYTES);
  assert.ok(!/[\n\r]/.test(text));
  assert.ok(text.startsWith('assistant text: a b '));
  assert.ok(!text.includes('\ufffd'), 'no split code point');
});

test('truncateUtf8: exactly at the bound unchanged, one past is cut with an ellipsis on a code point boundary', () => {
  const at = 'a'.repeat(MAX_PROGRESS_BYTES);
  assert.equal(truncateUtf8(at, MAX_PROGRESS_BYTES), at);
  const past = truncateUtf8(at + 'b', MAX_PROGRESS_BYTES);
  assert.equal(Buffer.byteLength(past), MAX_PROGRESS_BYTES);
  assert.ok(past.endsWith('…'));
  // A 4-byte emoji straddling the cut is dropped whole.
  const straddle = 'a'.repeat(MAX_PROGRESS_BYTES - 5) + '🎉' + 'tail';
  const cut = truncateUtf8(straddle, MAX_PROGRESS_BYTES);
  assert.equal(cut, 'a'.repeat(MAX_PROGRESS_BYTES - 5) + '…');
  assert.ok(Buffer.byteLength(cut) <= MAX_PROGRESS_BYTES);
  const twoByte = truncateUtf8('é'.repeat(600), 10);
  assert.equal(twoByte, 'é'.repeat(3) + '…');
  assert.equal(truncateUtf8('abcdef', 2), '');
});
