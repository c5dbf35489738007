/**
 * Typed readers for tool results in specs: each checks the shape it claims (and throws naming what is
 * off), so a spec reads fields without casts and a malformed result fails loudly instead of reading as
 * undefined.
 */
import type { EventPage } from '../../lib/runs/event-ring.ts';
import type { JsonObject } from '../../lib/util/json.ts';

/** A claude.run.events result: the run's id, state and completion, plus the page. */
export type EventPageView = EventPage & { readonly run_id: string; readonly state: string; readonly completed: boolean };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function need(cond: boolean, what: string, value: unknown): void {
  if (!cond) throw new Error(`not a claude.run.events result (${what}): ${JSON.stringify(value)?.slice(0, 300)}`);
}

export function eventPageOf(result: unknown): EventPageView {
  need(isObject(result), 'object', result);
  const r = result as Record<string, unknown>;
  for (const key of ['run_id', 'state', 'next_cursor'] as const) need(typeof r[key] === 'string', key, result);
  for (const key of ['completed', 'has_more', 'stale_cursor'] as const) need(typeof r[key] === 'boolean', key, result);
  for (const key of ['events_total', 'events_retained', 'bytes_retained', 'events_dropped', 'events_omitted', 'missed_events'] as const) need(Number.isInteger(r[key]), key, result);
  need(Array.isArray(r['events']) && (r['events'] as unknown[]).every((e) => isObject(e) && Number.isInteger(e['seq']) && isObject(e['event'])), 'events', result);
  return {
    run_id: r['run_id'] as string, state: r['state'] as string, completed: r['completed'] as boolean,
    events: r['events'] as Array<{ seq: number; event: JsonObject }>,
    next_cursor: r['next_cursor'] as string, has_more: r['has_more'] as boolean, missed_events: r['missed_events'] as number, stale_cursor: r['stale_cursor'] as boolean,
    events_total: r['events_total'] as number, events_retained: r['events_retained'] as number, bytes_retained: r['bytes_retained'] as number,
    events_dropped: r['events_dropped'] as number, events_omitted: r['events_omitted'] as number,
  };
}
