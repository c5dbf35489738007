import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { decodeRecord, encodeRecord, MAX_RECORD_BYTES } from '../../lib/state/record.ts';
import { newRunId } from '../../lib/runs/ids.ts';
import { sampleRecord } from './sample-record.ts';

test('a record round-trips through its codec', () => {
  const record = sampleRecord();
  assert.deepEqual(decodeRecord(encodeRecord(record), record.run_id), { kind: 'record', record });
  const running = sampleRecord({ state: 'running', ended: null, outcome: null, resume_session_id: null, owner: null, host: null });
  assert.deepEqual(decodeRecord(encodeRecord(running), running.run_id), { kind: 'record', record: running });
});

test('an outcome that would pass MAX_RECORD_BYTES is left out whole (outcome_omitted), never cut', () => {
  const base = sampleRecord();
  const overhead = encodeRecord({ ...base, outcome: { ...base.outcome!, text: '' } }).length;
  const fits = sampleRecord({ run_id: base.run_id, outcome: { ...base.outcome!, text: 'x'.repeat(MAX_RECORD_BYTES - overhead) } });
  assert.equal(encodeRecord(fits).length, MAX_RECORD_BYTES);
  const fitsBack = decodeRecord(encodeRecord(fits), fits.run_id);
  assert.equal(fitsBack.kind === 'record' && fitsBack.record.outcome?.text.length, MAX_RECORD_BYTES - overhead);
  const over = sampleRecord({ run_id: base.run_id, outcome: { ...base.outcome!, text: 'x'.repeat(MAX_RECORD_BYTES - overhead + 1) } });
  const decoded = decodeRecord(encodeRecord(over), over.run_id);
  assert.equal(decoded.kind, 'record');
  assert.equal(decoded.kind === 'record' && decoded.record.outcome, null);
  assert.equal(decoded.kind === 'record' && decoded.record.outcome_omitted, true);
});

test('corrupt, truncated, oversized or mismatched bytes are invalid, with a reason and never the content', () => {
  const record = sampleRecord();
  const bytes = encodeRecord(record);
  const cases: [string, Buffer, string, RegExp][] = [
    ['truncated', bytes.subarray(0, bytes.length - 3), record.run_id, /corrupt or truncated/],
    ['not UTF-8', Buffer.from([0x7b, 0xff, 0x7d]), record.run_id, /corrupt or truncated/],
    ['an array', Buffer.from('[]'), record.run_id, /not a JSON object/],
    ['oversized', Buffer.alloc(MAX_RECORD_BYTES + 1, 0x20), record.run_id, /larger than 65536 bytes/],
    ['another run', bytes, newRunId(randomBytes, record.instance), /another run/],
    ['a later format', Buffer.from(JSON.stringify({ ...record, format_version: 2 })), record.run_id, /format_version/],
    [
      'another instance',
      Buffer.from(JSON.stringify({ ...record, instance: '11111111-1111-4111-8111-111111111111' })),
      record.run_id,
      /another instance/,
    ],
    ['a bad state', Buffer.from(JSON.stringify({ ...record, state: 'exploded' })), record.run_id, /^state$/],
    ['a bad session', Buffer.from(JSON.stringify({ ...record, resume_session_id: '../../etc' })), record.run_id, /resume_session_id/],
    ['a bad time', Buffer.from(JSON.stringify({ ...record, created_at: 'yesterday' })), record.run_id, /created_at/],
    ['a bad end', Buffer.from(JSON.stringify({ ...record, ended: { at: record.created_at, by: 'magic' } })), record.run_id, /ended/],
    [
      'an outcome with ok and an error',
      Buffer.from(JSON.stringify({ ...record, outcome: { ...record.outcome, error: { code: 'x', message: 'y' } } })),
      record.run_id,
      /outcome/,
    ],
    ['an outcome without a settle', Buffer.from(JSON.stringify({ ...record, ended: null })), record.run_id, /without a settle/],
  ];
  for (const [what, input, runId, reason] of cases) {
    const decoded = decodeRecord(input, runId);
    assert.equal(decoded.kind, 'invalid', what);
    assert.match(decoded.kind === 'invalid' ? decoded.reason : '', reason, what);
  }
});
