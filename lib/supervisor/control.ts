/** Pure validation of control lines (adapter -> supervisor). Anything malformed is rejected whole. */
import type { ControlMessage, TerminateReason } from '../supervise/protocol.ts';
import { isPlainObject } from '../util/json.ts';

const TERMINATE_REASONS: readonly TerminateReason[] = ['cancel', 'timeout', 'idle_timeout', 'frame_too_large', 'final_too_large', 'adapter_gone'];
const MAX_GRACE_MS = 10 * 60 * 1000;

export function parseControlLine(line: string): ControlMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isPlainObject(value)) return null;
  if (value['type'] === 'terminate') {
    const reason = value['reason'];
    return TERMINATE_REASONS.find((r) => r === reason) !== undefined ? { type: 'terminate', reason: reason as TerminateReason } : null;
  }
  if (value['type'] !== 'spawn') return null;
  const { file, args, cwd, env, stdin } = { file: value['file'], args: value['args'], cwd: value['cwd'], env: value['env'], stdin: value['stdin'] };
  if (typeof file !== 'string' || file === '' || typeof cwd !== 'string' || cwd === '') return null;
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) return null;
  if (!isPlainObject(env) || !Object.values(env).every((v) => typeof v === 'string')) return null;
  if (stdin !== null && typeof stdin !== 'string') return null;
  const grace = (key: string, min: number): number | null => {
    const n = value[key];
    return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= MAX_GRACE_MS ? n : null;
  };
  const interruptGraceMs = grace('interruptGraceMs', 0);
  const termGraceMs = grace('termGraceMs', 0);
  const killGraceMs = grace('killGraceMs', 0);
  const trackIntervalMs = grace('trackIntervalMs', 1);
  if (interruptGraceMs === null || termGraceMs === null || killGraceMs === null || trackIntervalMs === null) return null;
  return {
    type: 'spawn',
    file,
    args: args as string[],
    cwd,
    env: env as Record<string, string>,
    stdin,
    interruptGraceMs,
    termGraceMs,
    killGraceMs,
    trackIntervalMs,
  };
}
