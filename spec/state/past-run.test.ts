import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pastRunOf } from '../../lib/state/past-run.ts';
import { sampleRecord } from './sample-record.ts';

const SESSION = '6e1b8f2c-3a4d-4e5f-9a0b-1c2d3e4f5a6b';

test('a settled record with its outcome answers that outcome, whatever the owner', () => {
  const record = sampleRecord();
  for (const verdict of ['alive', 'dead', null] as const)
    assert.deepEqual(pastRunOf(record, verdict), { kind: 'settled', record, outcome: record.outcome });
});

test('a settled record whose result was too large says so, with the session to resume', () => {
  const record = sampleRecord({ outcome: null, outcome_omitted: true });
  const past = pastRunOf(record, 'alive');
  assert.equal(past?.kind, 'ended');
  assert.match(
    past?.kind === 'ended' ? past.message : '',
    /finished at 2026-12-03T20:01:00.000Z.*larger than the 65536 bytes.*resume_session_id "6e1b8f2c/,
  );
});

test('ended by the server exit: when, and the session to resume or else to re-issue', () => {
  const ended = { at: '2026-12-03T20:05:00.000Z', by: 'server_exit' } as const;
  const withSession = pastRunOf(sampleRecord({ state: 'running', ended, outcome: null }), 'alive');
  assert.match(
    withSession?.kind === 'ended' ? withSession.message : '',
    /exited at 2026-12-03T20:05:00.000Z, before it settled; no result is kept\. .*resume_session_id "6e1b8f2c-3a4d-4e5f-9a0b-1c2d3e4f5a6b"/,
  );
  const without = pastRunOf(sampleRecord({ state: 'checking_version', ended, outcome: null, resume_session_id: null }), null);
  assert.match(without?.kind === 'ended' ? without.message : '', /not known to be saved: re-issue the call/);
  assert.ok(!(without?.kind === 'ended' ? without.message : '').includes(SESSION));
});

test('a record with no end: answered only when its server is proven gone (dead, or another boot)', () => {
  const record = sampleRecord({ state: 'running', ended: null, outcome: null });
  for (const verdict of ['dead', 'rebooted'] as const) {
    const past = pastRunOf(record, verdict);
    assert.match(past?.kind === 'ended' ? past.message : '', /when is not known: it was killed or crashed/);
  }
  for (const verdict of ['alive', 'self', 'foreign', 'unknown', null] as const)
    assert.equal(pastRunOf(record, verdict), null, String(verdict));
});
