/** Builds the final cleanup report line, guaranteed to fit REPORT_MAX_BYTES with room for the other lines. */
import { REPORT_MAX_BYTES, type CleanupProof, type ProcessIdentity, type ReportMessage } from '../protocol.ts';

/** Bytes kept free for the `spawned` and `exit` lines that precede the cleanup line on the same pipe. */
export const REPORT_RESERVED_BYTES = 1024;
const MAX_STEPS = 64;

export interface CleanupFacts {
  readonly survivors: readonly ProcessIdentity[];
  readonly steps: readonly string[];
  readonly error: string | null;
  readonly stderrTail: string;
  readonly stderrBytes: number;
  readonly proof: CleanupProof;
}

type CleanupMessage = Extract<ReportMessage, { type: 'cleanup' }>;

/** Serializes the cleanup line; shrinks the stderr tail, then the survivor list, until it fits. */
export function formatCleanupLine(facts: CleanupFacts, budgetBytes = REPORT_MAX_BYTES - REPORT_RESERVED_BYTES): string {
  let tail = facts.stderrTail;
  let survivors = facts.survivors;
  for (;;) {
    const message: CleanupMessage = {
      type: 'cleanup',
      confirmed: facts.survivors.length === 0 && facts.error === null,
      survivors,
      survivors_omitted: facts.survivors.length - survivors.length,
      steps: facts.steps.slice(0, MAX_STEPS),
      error: facts.error === null ? null : facts.error.slice(0, 1024),
      stderr_tail: tail,
      stderr_bytes: facts.stderrBytes,
      proof: facts.proof,
    };
    const line = JSON.stringify(message) + '\n';
    const size = Buffer.byteLength(line);
    if (size <= budgetBytes) return line;
    // Each dropped character removes at least one output byte, so one cut of `excess` characters suffices.
    if (tail.length > 0) tail = tail.slice(Math.min(tail.length, size - budgetBytes));
    else if (survivors.length > 0) survivors = survivors.slice(0, survivors.length >> 1);
    else throw new Error(`cleanup report cannot fit ${budgetBytes} bytes`);
  }
}
