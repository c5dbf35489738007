/** Pure validation of control lines (adapter -> supervisor). Anything malformed is rejected whole. */
import { RUN_MARKER_PATTERN, TERMINATE_REASONS, type CommandSpec, type ControlMessage, type RunPlacement } from '../protocol.ts';
import { isPlainObject, parseJsonObject } from '../../util/json.ts';
import { isFileIdOrNull } from '../file-id.ts';
import { parseTableAnswer } from '../table-wire.ts';

const MAX_GRACE_MS = 10 * 60 * 1000;
/** A probe answers within minutes or not at all. */
const MAX_PROBE_TIMEOUT_MS = 10 * 60 * 1000;

type Command = CommandSpec & RunPlacement;

export function parseControlLine(line: string): ControlMessage | null {
  const value = parseJsonObject(line);
  if (value === null) return null;
  // The server's answer to a table request: off-shape is malformed like any other line, never a table.
  if (value['type'] === 'table') return parseTableAnswer(value, Buffer.byteLength(line));
  if (value['type'] === 'terminate') {
    const reason = value['reason'];
    const known = TERMINATE_REASONS.find((r) => r === reason);
    return known !== undefined ? { type: 'terminate', reason: known } : null;
  }
  if (value['type'] === 'input') return typeof value['data'] === 'string' ? { type: 'input', data: value['data'] } : null;
  if (value['type'] === 'input_end') return Object.keys(value).length === 1 ? { type: 'input_end' } : null;
  const command = parseCommand(value);
  if (command === null) return null;
  const int = (key: string, min: number, max: number): number | null => {
    const n = value[key];
    return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max ? n : null;
  };
  if (value['type'] === 'probe') {
    const id = int('id', 0, Number.MAX_SAFE_INTEGER);
    const timeoutMs = int('timeoutMs', 1, MAX_PROBE_TIMEOUT_MS);
    const maxStdoutBytes = int('maxStdoutBytes', 0, Number.MAX_SAFE_INTEGER);
    if (id === null || timeoutMs === null || maxStdoutBytes === null) return null;
    return { type: 'probe', id, ...command, timeoutMs, maxStdoutBytes };
  }
  if (value['type'] !== 'spawn') return null;
  const stdin = value['stdin'];
  if (stdin !== null && typeof stdin !== 'string') return null;
  // Absent means closed after `stdin`: a supervisor started from an upgraded bundle file by an older server still runs.
  const keepStdinOpen = value['keepStdinOpen'] ?? false;
  if (typeof keepStdinOpen !== 'boolean' || (keepStdinOpen && stdin === null)) return null;
  const interruptGraceMs = int('interruptGraceMs', 0, MAX_GRACE_MS);
  const termGraceMs = int('termGraceMs', 0, MAX_GRACE_MS);
  const killGraceMs = int('killGraceMs', 0, MAX_GRACE_MS);
  const trackIntervalMs = int('trackIntervalMs', 1, MAX_GRACE_MS);
  if (interruptGraceMs === null || termGraceMs === null || killGraceMs === null || trackIntervalMs === null) return null;
  // Absent means unbound: a supervisor started from an upgraded bundle file by an older server still runs.
  const expectFileId = value['expectFileId'] ?? null;
  const expectImageId = value['expectImageId'] ?? null;
  if (!isFileIdOrNull(expectFileId) || !isFileIdOrNull(expectImageId)) return null;
  return {
    type: 'spawn',
    ...command,
    stdin,
    keepStdinOpen,
    interruptGraceMs,
    termGraceMs,
    killGraceMs,
    trackIntervalMs,
    expectFileId,
    expectImageId,
  };
}

function parseCommand(value: Record<string, unknown>): Command | null {
  const { file, args, cwd, env, marker } = {
    file: value['file'],
    args: value['args'],
    cwd: value['cwd'],
    env: value['env'],
    marker: value['marker'],
  };
  if (typeof file !== 'string' || file === '' || typeof cwd !== 'string' || cwd === '') return null;
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) return null;
  if (!isPlainObject(env) || !Object.values(env).every((v) => typeof v === 'string')) return null;
  if (typeof marker !== 'string' || !RUN_MARKER_PATTERN.test(marker)) return null;
  // Absent means no cgroup: a supervisor started from an upgraded bundle file by an older server still runs.
  const cgroup = value['cgroup'] ?? null;
  if (!(cgroup === null || (typeof cgroup === 'string' && cgroup.startsWith('/') && !cgroup.split('/').includes('..')))) return null;
  const cgroupRequired = value['cgroupRequired'] ?? false;
  if (typeof cgroupRequired !== 'boolean' || (cgroupRequired && cgroup === null)) return null;
  return { file, args: args as string[], cwd, env: env as Record<string, string>, marker, cgroup, cgroupRequired };
}
