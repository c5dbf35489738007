/**
 * The open-run arguments of claude.run.start (keep_open, open_idle_seconds, turn_limit), turned into the
 * request's keepOpen. The bounds a schema states are checked again here, so a library caller gets the same
 * refusals; every failure is an input error naming the argument.
 */
import { ToolError } from '../tool-errors.ts';
import type { JsonObject } from '../util/json.ts';
import { DEFAULT_OPEN_IDLE_SECONDS, MAX_OPEN_TURNS } from '../runs/turns.ts';
import type { RunRequest } from '../runs/types.ts';

/** The operator's largest open_idle_seconds when the server is given none (--max-open-idle-seconds). */
export const DEFAULT_MAX_OPEN_IDLE_SECONDS = 3600;

/** open_idle_seconds' default under an operator maximum: the default, or the maximum when that is lower. */
export function defaultOpenIdleSeconds(maxOpenIdleSeconds: number): number {
  return Math.min(DEFAULT_OPEN_IDLE_SECONDS, maxOpenIdleSeconds);
}

export function parseOpenInput(args: JsonObject, maxOpenIdleSeconds: number): NonNullable<RunRequest['keepOpen']> | null {
  const idle = args['open_idle_seconds'];
  const limit = args['turn_limit'];
  if (args['keep_open'] !== true) {
    if (idle !== undefined) throw new ToolError('invalid_arguments', 'open_idle_seconds requires keep_open: true', '/open_idle_seconds');
    if (limit !== undefined) throw new ToolError('invalid_arguments', 'turn_limit requires keep_open: true', '/turn_limit');
    return null;
  }
  const idleSeconds = idle === undefined ? defaultOpenIdleSeconds(maxOpenIdleSeconds) : idle;
  if (typeof idleSeconds !== 'number' || !Number.isInteger(idleSeconds) || idleSeconds < 1 || idleSeconds > maxOpenIdleSeconds)
    throw new ToolError('invalid_arguments', `open_idle_seconds must be an integer from 1 to ${maxOpenIdleSeconds}`, '/open_idle_seconds');
  const turnLimit = limit === undefined ? MAX_OPEN_TURNS : limit;
  if (typeof turnLimit !== 'number' || !Number.isInteger(turnLimit) || turnLimit < 1 || turnLimit > MAX_OPEN_TURNS)
    throw new ToolError('invalid_arguments', `turn_limit must be an integer from 1 to ${MAX_OPEN_TURNS}`, '/turn_limit');
  return { idleMs: idleSeconds * 1000, turnLimit };
}
