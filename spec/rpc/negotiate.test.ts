import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { features, LATEST_PROTOCOL_VERSION, negotiateVersion, SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/rpc/negotiate.ts';

describe('negotiateVersion', () => {
  it('lists exactly the four implemented dates, newest first', () => {
    assert.deepEqual([...SUPPORTED_PROTOCOL_VERSIONS], ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
    assert.equal(LATEST_PROTOCOL_VERSION, '2025-11-25');
  });
  for (const date of SUPPORTED_PROTOCOL_VERSIONS) {
    it(`echoes ${date}`, () => assert.equal(negotiateVersion(date), date));
  }
  for (const other of ['2026-07-28', '2024-10-07', '2025-11-26', '', 'latest', 20251125, null, undefined, {}]) {
    it(`answers the newest date to ${JSON.stringify(other)}`, () => assert.equal(negotiateVersion(other), '2025-11-25'));
  }
});

describe('features by date', () => {
  const table = {
    '2024-11-05': {
      batching: false,
      toolAnnotations: false,
      progressMessage: false,
      structuredContent: false,
      titles: false,
      validationAsToolError: false,
    },
    '2025-03-26': {
      batching: true,
      toolAnnotations: true,
      progressMessage: true,
      structuredContent: false,
      titles: false,
      validationAsToolError: false,
    },
    '2025-06-18': {
      batching: false,
      toolAnnotations: true,
      progressMessage: true,
      structuredContent: true,
      titles: true,
      validationAsToolError: false,
    },
    '2025-11-25': {
      batching: false,
      toolAnnotations: true,
      progressMessage: true,
      structuredContent: true,
      titles: true,
      validationAsToolError: true,
    },
  } as const;
  for (const date of SUPPORTED_PROTOCOL_VERSIONS) {
    it(date, () => {
      const actual = Object.fromEntries(Object.entries(features).map(([name, has]) => [name, has(date)]));
      assert.deepEqual(actual, table[date]);
    });
  }
});
