/**
 * Reads the log of fixtures/mcp-wire-tap.mjs (one JSON object a line: `{t, dir, line}` for each wire line,
 * `{t, signal}` for a signal the host sent, `{t, exit, signal}` when the server exited), checking each entry.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { JsonObject } from '../../lib/util/json.ts';
import { jsonLines, num, parseObj, str } from '../helpers/typed-results.ts';

export interface WireEntry {
  readonly t: number;
  readonly dir?: 'c2s' | 's2c';
  readonly line?: string;
  readonly signal?: string | null;
  readonly exit?: number | null;
  /** The tap's first entry: how long after its spawn it started counting t. */
  readonly spawnLagMs?: number;
}

/** One JSON-RPC message on the tapped wire, with its direction and time (ms since the tap started). */
export interface WireMessage {
  readonly t: number;
  readonly dir: 'c2s' | 's2c';
  readonly msg: JsonObject;
}

function entryOf(raw: JsonObject, index: number): WireEntry {
  const what = `wire-tap entry ${index + 1}`;
  const { dir, line, signal, exit } = raw;
  const lag = raw['spawn_lag_ms'];
  if (dir !== undefined && dir !== 'c2s' && dir !== 's2c') throw new Error(`${what}: dir ${JSON.stringify(dir)}`);
  if (signal !== undefined && signal !== null && typeof signal !== 'string') throw new Error(`${what}: signal ${JSON.stringify(signal)}`);
  if (exit !== undefined && exit !== null && typeof exit !== 'number') throw new Error(`${what}: exit ${JSON.stringify(exit)}`);
  return {
    t: num(raw['t'], `${what}: t`),
    ...(dir === undefined ? {} : { dir }),
    ...(line === undefined ? {} : { line: str(line, `${what}: line`) }),
    ...(signal === undefined ? {} : { signal }),
    ...(exit === undefined ? {} : { exit }),
    ...(lag === undefined ? {} : { spawnLagMs: num(lag, `${what}: spawn_lag_ms`) }),
  };
}

/**
 * Every complete entry of the log so far (none when the tap has not written yet). A spec reads while the
 * tap appends: a long line (tools/list is ~31 KB) can be caught half written, so only text up to the last
 * newline is read; the rest is read on the next call.
 */
export function readWireLog(log: string): WireEntry[] {
  if (!existsSync(log)) return [];
  const text = readFileSync(log, 'utf8');
  return jsonLines(text.slice(0, text.lastIndexOf('\n') + 1), 'wire-tap line').map(entryOf);
}

/** The JSON-RPC messages among the entries, each line parsed as an object. */
export function wireMessages(entries: readonly WireEntry[]): WireMessage[] {
  const messages: WireMessage[] = [];
  for (const e of entries) {
    if (e.line === undefined || e.dir === undefined) continue;
    messages.push({ t: e.t, dir: e.dir, msg: parseObj(e.line, `wire line at ${e.t} ms`) });
  }
  return messages;
}
