/** Pure validation of report lines (supervisor -> adapter). Unknown or malformed lines yield null. */
import {
  CLEANUP_PROOFS,
  VERSION_PROOFS,
  type ProbeOutcome,
  type ProcessIdentity,
  type RawProbeOutcome,
  type ReportMessage,
} from './protocol.ts';
import { isFileIdOrNull } from './file-id.ts';
import { isPlainObject, parseJsonObject } from '../util/json.ts';

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const isIdentity = (v: unknown): v is ProcessIdentity => isPlainObject(v) && isInt(v['pid']) && isStr(v['start']);

export function parseReportLine(line: string): ReportMessage | null {
  const v = parseJsonObject(line);
  if (v === null) return null;
  switch (v['type']) {
    case 'probe_result': {
      const outcome = parseProbeOutcome(v);
      // Absent (an older supervisor file): the answer vouches for no file.
      const fileId = v['file_id'] ?? null;
      const imageId = v['image_id'] ?? null;
      if (!isFileIdOrNull(fileId) || !isFileIdOrNull(imageId)) return null;
      return isInt(v['id']) && outcome !== null ? { type: 'probe_result', id: v['id'], outcome, fileId, imageId } : null;
    }
    case 'spawned': {
      const versionProof = VERSION_PROOFS.find((p) => p === (v['version_proof'] ?? 'path'));
      return isInt(v['pid']) && isStr(v['start']) && isInt(v['pgid']) && versionProof !== undefined
        ? { type: 'spawned', pid: v['pid'], start: v['start'], pgid: v['pgid'], version_proof: versionProof }
        : null;
    }
    case 'spawn_error':
      return isStr(v['code']) && isStr(v['message']) ? { type: 'spawn_error', code: v['code'], message: v['message'] } : null;
    case 'exit': {
      const code = v['code'];
      const signal = v['signal'];
      if (!(code === null || isInt(code)) || !(signal === null || isStr(signal))) return null;
      return { type: 'exit', code, signal };
    }
    case 'cleanup': {
      const survivors = v['survivors'];
      const steps = v['steps'];
      const error = v['error'];
      if (typeof v['confirmed'] !== 'boolean' || !Array.isArray(survivors) || !survivors.every(isIdentity)) return null;
      if (!Array.isArray(steps) || !steps.every(isStr) || !(error === null || isStr(error))) return null;
      if (!isInt(v['survivors_omitted']) || !isStr(v['stderr_tail']) || !isInt(v['stderr_bytes'])) return null;
      const proof = CLEANUP_PROOFS.find((p) => p === (v['proof'] ?? 'process_scan'));
      if (proof === undefined) return null;
      return {
        type: 'cleanup',
        // Never trust a "confirmed" that contradicts its own evidence.
        confirmed: v['confirmed'] && survivors.length === 0 && v['survivors_omitted'] === 0 && error === null,
        survivors: survivors.map((s) => ({ pid: s.pid, start: s.start })),
        survivors_omitted: v['survivors_omitted'],
        steps,
        error,
        stderr_tail: v['stderr_tail'],
        stderr_bytes: v['stderr_bytes'],
        proof,
      };
    }
    default:
      return null;
  }
}

/**
 * The wire form of a probe result: the raw output bytes travel as base64, so the line's size is bounded by
 * the byte bounds whatever the bytes are (invalid UTF-8 is decoded only on the adapter's side).
 */
export function formatProbeResult(id: number, outcome: RawProbeOutcome, fileId: string | null, imageId: string | null): string {
  const wire: Record<string, unknown> = { type: 'probe_result', id, kind: outcome.kind, file_id: fileId, image_id: imageId };
  if (outcome.kind === 'exited') {
    Object.assign(wire, {
      code: outcome.code,
      signal: outcome.signal,
      stdout_overflow: outcome.stdoutOverflow,
      stdout_b64: outcome.stdout.toString('base64'),
      stderr_b64: outcome.stderr.toString('base64'),
    });
  } else if (outcome.kind === 'spawn_error') {
    wire['message'] = outcome.message;
  }
  return JSON.stringify(wire) + '\n';
}

function parseProbeOutcome(v: Record<string, unknown>): ProbeOutcome | null {
  switch (v['kind']) {
    case 'timeout':
      return { kind: 'timeout' };
    case 'cancelled':
      return { kind: 'cancelled' };
    case 'spawn_error':
      return isStr(v['message']) ? { kind: 'spawn_error', message: v['message'] } : null;
    case 'exited': {
      const { code, signal } = { code: v['code'], signal: v['signal'] };
      if (!(code === null || isInt(code)) || !(signal === null || isStr(signal)) || typeof v['stdout_overflow'] !== 'boolean') return null;
      if (!isStr(v['stdout_b64']) || !isStr(v['stderr_b64'])) return null;
      return {
        kind: 'exited',
        code,
        signal,
        stdoutOverflow: v['stdout_overflow'],
        stdout: Buffer.from(v['stdout_b64'], 'base64').toString('utf8'),
        stderr: Buffer.from(v['stderr_b64'], 'base64').toString('utf8'),
      };
    }
    default:
      return null;
  }
}
