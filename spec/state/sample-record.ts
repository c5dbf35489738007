import { randomBytes } from 'node:crypto';
import { RECORD_FORMAT_VERSION, type RunRecord } from '../../lib/state/record.ts';
import { newRunId } from '../../lib/runs/ids.ts';

const INSTANCE = '0f8fad5b-d9cb-469f-a165-70867728950e';
const SESSION = '6e1b8f2c-3a4d-4e5f-9a0b-1c2d3e4f5a6b';

/** A well-formed settled task record of a fresh run id; overrides replace fields. */
export function sampleRecord(overrides: Partial<RunRecord> = {}): RunRecord {
  const run_id = newRunId(randomBytes, INSTANCE);
  return {
    format_version: RECORD_FORMAT_VERSION,
    run_id,
    instance: INSTANCE,
    owner: '1d4c.1f.2s.0123456789abcdef',
    host: 'box',
    task: true,
    state: 'completed',
    resume_session_id: SESSION,
    created_at: '2026-12-03T20:00:00.000Z',
    ended: { at: '2026-12-03T20:01:00.000Z', by: 'settled' },
    outcome: { ok: true, summary: `${run_id} succeeded`, error: null, result: { run_id, result: 'hi' }, text: 'hi', cancelled: false },
    outcome_omitted: false,
    ...overrides,
  };
}
