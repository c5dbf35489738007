import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createIngest, MAX_DENIED_TOOLS, MAX_FINAL_BYTES } from '../../lib/runs/ingest.ts';
import { MAX_EVENTS } from '../../lib/runs/event-ring.ts';
import { ingestCapture, lines } from './capture.ts';
import { parseObj } from '../helpers/typed-results.ts';

const GOLDEN_RESULT = parseObj(lines('golden-ok-stream-partial').at(-1) ?? '', 'the golden final event');

/** The real golden result padded with an extension field to exactly `bytes` bytes of JSON. */
function resultFrame(bytes: number, extra: Record<string, unknown> = {}): Buffer {
  const base = Buffer.byteLength(JSON.stringify({ ...GOLDEN_RESULT, ...extra, x_pad: '' }));
  const frame = Buffer.from(JSON.stringify({ ...GOLDEN_RESULT, ...extra, x_pad: 'x'.repeat(bytes - base) }));
  assert.equal(frame.length, bytes);
  return frame;
}

test('golden text turn: final kept whole, init facts, assistant model, every event in the ring', () => {
  const { ingest, signals } = ingestCapture('golden-ok-stream-partial');
  const state = ingest.snapshot();
  assert.deepEqual(signals, []);
  assert.equal(state.results_seen, 1);
  assert.equal(state.final?.['result'], 'Hi! I am a fake Claude.');
  assert.equal(state.final?.['fast_mode_state'], 'off', 'extension fields retained');
  assert.equal(state.final_bytes, Buffer.byteLength(lines('golden-ok-stream-partial').at(-1) ?? ''));
  assert.deepEqual(state.init, {
    session_id: '89091831-a95e-44bd-95a5-40cc9d0c6251',
    model: 'claude-opus-5-5',
    claude_code_version: '2.1.332',
    permissionMode: 'default',
    cwd: '/path/to/cwd',
  });
  assert.equal(state.assistant_model, 'claude-opus-5-5');
  assert.equal(state.last_assistant_error, null);
  assert.equal(state.malformed_lines, 0);
  assert.equal(state.events_total, 12);
  assert.equal(state.events_dropped, 0);
  assert.equal(ingest.ring.page(undefined, 12).events.at(-1)?.event['type'], 'result');
});

test('API error capture: synthetic assistant error recorded, "<synthetic>" model ignored', () => {
  const state = ingestCapture('err-r0-http_401').ingest.snapshot();
  assert.equal(state.last_assistant_error, 'authentication_failed');
  assert.equal(state.last_assistant_error_status, 401);
  assert.equal(state.assistant_model, null);
  assert.equal(state.final?.['is_error'], true);
});

test('api_retry events are counted and the last one kept', () => {
  const state = ingestCapture('err-def-http_529').ingest.snapshot();
  assert.equal(state.api_retries, 2);
  assert.equal(state.last_api_retry?.['attempt'], 2);
  assert.equal(state.last_api_retry?.['error_status'], 529);
});

test('permission_denied events are counted with their tool names', () => {
  const state = ingestCapture('perm-dontAsk__bash_redirect').ingest.snapshot();
  assert.equal(state.permission_denied_events, 1);
  assert.deepEqual(state.denied_tools, ['Bash']);
});

test('denied tool names are bounded: exactly MAX_DENIED_TOOLS kept, one more counted only', () => {
  const ingest = createIngest({ ringId: 'r' });
  for (let i = 0; i <= MAX_DENIED_TOOLS; i += 1) {
    ingest.onFrame(Buffer.from(JSON.stringify({ type: 'system', subtype: 'permission_denied', tool_name: `T${i}` })));
    if (i === MAX_DENIED_TOOLS - 1) assert.equal(ingest.snapshot().denied_tools.length, MAX_DENIED_TOOLS);
  }
  const state = ingest.snapshot();
  assert.equal(state.denied_tools.length, MAX_DENIED_TOOLS);
  assert.equal(state.permission_denied_events, MAX_DENIED_TOOLS + 1);
});

test('non-JSON lines are counted, not stored; blank lines are ignored; init is the first one', () => {
  const ingest = createIngest({ ringId: 'r' });
  const [init] = lines('golden-ok-stream-partial');
  for (const frame of [
    'not json',
    '',
    '   ',
    '[1]',
    '{"type":"result"',
    init ?? '',
    '{"type":"system","subtype":"init","session_id":"other"}',
  ]) {
    assert.equal(ingest.onFrame(Buffer.from(frame)), 'continue');
  }
  const state = ingest.snapshot();
  assert.equal(state.malformed_lines, 3);
  assert.equal(state.events_total, 2);
  assert.equal(state.init?.session_id, '89091831-a95e-44bd-95a5-40cc9d0c6251');
});

test('the first valid result is the final; later ones are duplicates; invalid ones never become the final', () => {
  const ingest = createIngest({ ringId: 'r' });
  ingest.onFrame(Buffer.from('{"type":"result","result":"no subtype"}'));
  assert.equal(ingest.snapshot().final, null);
  ingest.onFrame(Buffer.from(JSON.stringify({ ...GOLDEN_RESULT, uuid: 'first' })));
  ingest.onFrame(Buffer.from(JSON.stringify({ ...GOLDEN_RESULT, uuid: 'second' })));
  const state = ingest.snapshot();
  assert.equal(state.results_seen, 3);
  assert.equal(state.invalid_results, 1);
  assert.equal(state.final?.['uuid'], 'first');
  assert.equal(state.events_total, 3, 'all result events stay visible in the ring');
});

test('final event bound: exactly MAX_FINAL_BYTES is kept; one byte more fails, is not kept anywhere, and blocks later finals', () => {
  const atBound = createIngest({ ringId: 'r' });
  assert.equal(atBound.onFrame(resultFrame(MAX_FINAL_BYTES)), 'continue');
  assert.equal(atBound.snapshot().final_bytes, MAX_FINAL_BYTES);
  assert.equal(atBound.snapshot().events_omitted, 0);

  const past = createIngest({ ringId: 'r' });
  assert.equal(past.onFrame(resultFrame(MAX_FINAL_BYTES + 1)), 'final_too_large');
  let state = past.snapshot();
  assert.equal(state.final, null);
  assert.equal(state.final_too_large_bytes, MAX_FINAL_BYTES + 1);
  assert.equal(state.events_omitted, 1);
  assert.equal(past.ring.page(undefined).events.length, 0);
  assert.equal(past.onFrame(Buffer.from(JSON.stringify(GOLDEN_RESULT))), 'continue');
  state = past.snapshot();
  assert.equal(state.final, null, 'a later small result does not replace the refused one');
  assert.equal(state.results_seen, 2);
});

test('maxFinalBytes option: at and one past a custom bound; a large duplicate is not re-checked', () => {
  const ingest = createIngest({ ringId: 'r', maxFinalBytes: 4000 });
  assert.equal(ingest.onFrame(resultFrame(4000)), 'continue');
  assert.equal(ingest.onFrame(resultFrame(4001)), 'continue');
  assert.equal(ingest.snapshot().results_seen, 2);
  assert.equal(createIngest({ ringId: 'r', maxFinalBytes: 4000 }).onFrame(resultFrame(4001)), 'final_too_large');
});

test('an oversized frame reported by the splitter: signal, counted, omitted with a seq', () => {
  const ingest = createIngest({ ringId: 'r' });
  ingest.onFrame(Buffer.from('{"type":"assistant"}'));
  assert.equal(ingest.onOversizeFrame(2 * 1024 * 1024), 'frame_too_large');
  assert.equal(ingest.onOversizeFrame(1024 * 1024 + 1), 'frame_too_large');
  const state = ingest.snapshot();
  assert.equal(state.frames_too_large, 2);
  assert.equal(state.largest_oversize_bytes, 2 * 1024 * 1024);
  assert.equal(state.events_omitted, 2);
  assert.equal(state.events_total, 3);
});

test('a flood of events stays bounded and every eviction is counted', () => {
  const ingest = createIngest({ ringId: 'r' });
  const delta = lines('golden-ok-stream-partial')[4] ?? '';
  for (let i = 0; i < 5000; i += 1) ingest.onFrame(Buffer.from(delta));
  const state = ingest.snapshot();
  assert.equal(state.events_total, 5000);
  assert.equal(state.events_dropped, 5000 - MAX_EVENTS);
  assert.equal(ingest.ring.counts().events_retained, MAX_EVENTS);
});

test('snapshots are independent of later ingestion', () => {
  const ingest = createIngest({ ringId: 'r' });
  const before = ingest.snapshot();
  ingest.onFrame(Buffer.from('{"type":"system","subtype":"permission_denied","tool_name":"Write"}'));
  assert.deepEqual(before.denied_tools, []);
  assert.equal(before.events_total, 0);
});

test('a frame that is not valid UTF-8 reads back as its decoding (replacement characters), counted as such; the final from a view of a reused chunk stays whole', () => {
  const ingest = createIngest({ ringId: 'r' });
  // {"type":"user","p":"a<FF>b"}: the ring keeps what decoding gives, as it always did.
  const invalid = Buffer.concat([Buffer.from('{"type":"user","p":"a'), Buffer.from([0xff]), Buffer.from('b"}')]);
  assert.equal(ingest.onFrame(invalid), 'continue');
  const decoded = invalid.toString('utf8');
  assert.equal(ingest.ring.counts().bytes_retained, Buffer.byteLength(decoded));
  assert.notEqual(Buffer.byteLength(decoded), invalid.length);
  assert.deepEqual(ingest.ring.page(undefined).events[0]?.event, JSON.parse(decoded));
  // Frames arrive as views of the pipe's chunk; whatever is kept must not change when that memory is reused.
  const chunk = Buffer.from(`${JSON.stringify(GOLDEN_RESULT)}\n`);
  const frame = chunk.subarray(0, chunk.length - 1);
  assert.equal(ingest.onFrame(frame), 'continue');
  chunk.fill(0x20);
  assert.deepEqual(ingest.snapshot().final, GOLDEN_RESULT);
  assert.deepEqual(ingest.ring.page(undefined).events[1]?.event, GOLDEN_RESULT);
});
