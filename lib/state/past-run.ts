/**
 * What a server can say about a run of a server that is gone, from that run's record: the compact result it
 * settled with, or that it ended when its server exited (the supervisor ends every run when its server goes),
 * with the conversation to resume. Nothing more is claimed than the record and the owner check show. Pure.
 */
import type { OwnerVerdict } from '../process/owner.ts';
import type { RecordedOutcome, RunRecord } from './record.ts';
import { MAX_RECORD_BYTES } from './record.ts';

export type PastRun =
  /** The run settled and its compact result was kept. */
  | { readonly kind: 'settled'; readonly record: RunRecord; readonly outcome: RecordedOutcome }
  /** The run is over, and no result is kept: the message says what is known and what to do. */
  | { readonly kind: 'ended'; readonly record: RunRecord; readonly message: string };

/**
 * The answer for a record, given what the owner check says of the server that wrote it (null: the record
 * names no owner). A record of a run still going (no end written) is answered only when its server is proven
 * gone: `dead`, or `foreign` with another boot (a reboot ended it). Otherwise null: today's "unknown".
 */
export function pastRunOf(record: RunRecord, ownerVerdict: OwnerVerdict | 'rebooted' | null): PastRun | null {
  const { ended } = record;
  if (ended !== null && ended.by === 'settled') {
    if (record.outcome !== null) return { kind: 'settled', record, outcome: record.outcome };
    const lost = record.outcome_omitted
      ? ` its result was larger than the ${MAX_RECORD_BYTES} bytes a record keeps and was not kept.`
      : ' its result was not kept.';
    return {
      kind: 'ended',
      record,
      message: `The run ${record.run_id} finished at ${ended.at}, under a server that has since exited;${lost}${advice(record)}`,
    };
  }
  if (ended !== null) return { kind: 'ended', record, message: exitMessage(record, ended.at) };
  if (ownerVerdict === 'dead' || ownerVerdict === 'rebooted') return { kind: 'ended', record, message: exitMessage(record, null) };
  return null;
}

function exitMessage(record: RunRecord, at: string | null): string {
  const when = at === null ? ' (when is not known: it was killed or crashed)' : ` at ${at}`;
  return `The run ${record.run_id} ended when the server that ran it exited${when}, before it settled; no result is kept.${advice(record)}`;
}

function advice(record: RunRecord): string {
  return record.resume_session_id === null
    ? ' Its conversation is not known to be saved: re-issue the call to run it again.'
    : ` Its conversation can be resumed: call claude.run with resume_session_id "${record.resume_session_id}" (or re-issue the call to start over).`;
}
