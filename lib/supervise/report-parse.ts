/** Pure validation of report lines (supervisor -> adapter). Unknown or malformed lines yield null. */
import type { ProcessIdentity, ReportMessage } from './protocol.ts';
import { isPlainObject } from '../util/json.ts';

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const isIdentity = (v: unknown): v is ProcessIdentity => isPlainObject(v) && isInt(v['pid']) && isStr(v['start']);

export function parseReportLine(line: string): ReportMessage | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isPlainObject(v)) return null;
  switch (v['type']) {
    case 'spawned':
      return isInt(v['pid']) && isStr(v['start']) && isInt(v['pgid']) ? { type: 'spawned', pid: v['pid'], start: v['start'], pgid: v['pgid'] } : null;
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
      };
    }
    default:
      return null;
  }
}
