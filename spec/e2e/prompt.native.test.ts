// Prompts for real, always one stream-json user line on stdin (never argv): a short one, 64 KiB, and past
// 128 KiB (a single argv string could not hold it at all), the prompt the fake API receives is byte-for-byte
// the one given to claude.run, and the native's argv never carries it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lastUserText } from '../../fixtures/fake-anthropic/server.ts';
import { MAX_ARG_STRLEN_BYTES } from '../../lib/native/tree.ts';
import { inCwd, marker, startAdapterTier } from './adapter-tier.ts';
import type { AdapterTier } from './adapter-tier.ts';

const KIB_64_BYTES = 64 * 1024;
const OVER_128_KIB_BYTES = 128 * 1024 + 4096;

/**
 * Exactly `bytes` UTF-8 bytes: starts with dashes (it must never be read as a flag), carries multi-byte
 * characters, newlines and tabs, and ends in a non-space (so trimming would show).
 */
function promptOfBytes(bytes: number, id: string): string {
  const head = `--${id} keep me intact\n`;
  const unit = 'ünï\tcødé ✓ line\n';
  let text = head;
  while (Buffer.byteLength(text + unit, 'utf8') + 3 <= bytes) text += unit;
  text += 'x'.repeat(bytes - Buffer.byteLength(text, 'utf8') - 3);
  text += 'END';
  assert.equal(Buffer.byteLength(text, 'utf8'), bytes);
  return text;
}

describe('adapter over the real binary: large prompts reach the native process intact', () => {
  let tier: AdapterTier;
  before(async () => {
    tier = await startAdapterTier();
  });
  after(async () => {
    await tier.close();
  });

  const cases = [
    { bytes: 64, via: 'a user line (short)' },
    { bytes: KIB_64_BYTES + 1, via: 'a user line (past 64 KiB)' },
    { bytes: OVER_128_KIB_BYTES, via: 'a user line (over 128 KiB)' },
  ];
  for (const { bytes, via } of cases) {
    it(`${bytes} bytes via ${via}`, async () => {
      await inCwd(tier, async (cwd) => {
        const id = marker('big');
        const prompt = promptOfBytes(bytes, id);
        const out = await tier.call('claude.run', { prompt, cwd });
        assert.equal(out.isError, false, JSON.stringify(out.error));
        const calls = tier.callsWith(id);
        assert.equal(calls.length, 1);
        const received = lastUserText(calls[0]?.body);
        assert.equal(Buffer.byteLength(received, 'utf8'), bytes);
        assert.ok(received === prompt, 'the API received the prompt unchanged');
      });
    });
  }

  it('the 128 KiB case really exceeds what one argv string may hold', () => {
    assert.ok(OVER_128_KIB_BYTES > MAX_ARG_STRLEN_BYTES);
  });
});
