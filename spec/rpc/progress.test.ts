import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createProgressReporter, getProgressToken, MAX_PROGRESS_MESSAGE_BYTES, truncateUtf8 } from '../../lib/rpc/progress.ts';
import type { JsonObject } from '../../lib/util/json.ts';

describe('progress', () => {
  it('reads string and number tokens only', () => {
    assert.equal(getProgressToken({ _meta: { progressToken: 'a' } }), 'a');
    assert.equal(getProgressToken({ _meta: { progressToken: 7 } }), 7);
    assert.equal(getProgressToken({ _meta: { progressToken: null } }), undefined);
    assert.equal(getProgressToken({ _meta: { progressToken: {} } }), undefined);
    assert.equal(getProgressToken({ _meta: [] }), undefined);
    assert.equal(getProgressToken({}), undefined);
  });

  it('counts 1, 2, 3 and stops for good', () => {
    const sent: JsonObject[] = [];
    const reporter = createProgressReporter(9, '2025-06-18', (n) => sent.push(n));
    reporter.report?.('a');
    reporter.report?.('b');
    reporter.stop();
    reporter.report?.('c');
    assert.deepEqual(sent, [
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 9, progress: 1, message: 'a' } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 9, progress: 2, message: 'b' } },
    ]);
  });

  it('omits message under 2024-11-05, which has no such field', () => {
    const sent: JsonObject[] = [];
    createProgressReporter('t', '2024-11-05', (n) => sent.push(n)).report?.('a');
    assert.deepEqual(sent, [{ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } }]);
  });

  it('gives no callback without a token', () => {
    assert.equal(createProgressReporter(undefined, '2025-11-25', () => assert.fail()).report, undefined);
  });

  it('bounds messages to 1 KiB of UTF-8, exactly at the bound and one past', () => {
    const exact = 'x'.repeat(MAX_PROGRESS_MESSAGE_BYTES);
    assert.equal(truncateUtf8(exact, MAX_PROGRESS_MESSAGE_BYTES), exact);
    const past = truncateUtf8(`${exact}x`, MAX_PROGRESS_MESSAGE_BYTES);
    assert.ok(Buffer.byteLength(past) <= MAX_PROGRESS_MESSAGE_BYTES);
    assert.ok(past.endsWith('…'));
    const multibyte = truncateUtf8('é'.repeat(MAX_PROGRESS_MESSAGE_BYTES), MAX_PROGRESS_MESSAGE_BYTES);
    assert.ok(Buffer.byteLength(multibyte) <= MAX_PROGRESS_MESSAGE_BYTES);
    assert.ok(!multibyte.includes('\uFFFD'));
  });
});
