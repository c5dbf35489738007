/** A tiny node:http client for probing the fake API: no keep-alive, so no socket outlives a test. */
import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { parseObj } from '../helpers/typed-results.ts';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** SSE events parsed from `data:` lines (empty for non-SSE answers). */
  readonly events: ReadonlyArray<Record<string, unknown>>;
  /** Set when the connection broke before the body ended (e.g. 'ECONNRESET', 'aborted'). */
  readonly broken: string | null;
  /** performance.now() at which each SSE event arrived. */
  readonly eventTimesMs: readonly number[];
}

export interface HttpCall {
  readonly method?: string;
  readonly path?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  /** Called once per SSE event as it arrives (e.g. to close the fake mid-stream). */
  readonly onEvent?: (event: Record<string, unknown>) => void;
}

export function call(baseUrl: string, spec: HttpCall): Promise<HttpAnswer> {
  const payload = spec.body === undefined ? undefined : Buffer.from(typeof spec.body === 'string' ? spec.body : JSON.stringify(spec.body));
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${spec.path ?? '/v1/messages?beta=true'}`, {
      method: spec.method ?? 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', ...(payload ? { 'content-length': String(payload.length) } : {}), ...spec.headers },
    }, (res) => {
      let text = '';
      let pending = '';
      const events: Array<Record<string, unknown>> = [];
      const eventTimesMs: number[] = [];
      let broken: string | null = null;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        pending += chunk;
        const frames = pending.split('\n\n');
        pending = frames.pop() ?? '';
        for (const frame of frames) {
          const data = frame.split('\n').find((line) => line.startsWith('data: '));
          if (data === undefined) continue;
          const event = parseObj(data.slice('data: '.length), 'an SSE data line');
          events.push(event);
          eventTimesMs.push(performance.now());
          spec.onEvent?.(event);
        }
      });
      const finish = (): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, events, broken, eventTimesMs });
      res.on('error', (error: NodeJS.ErrnoException) => { broken = error.code ?? error.message; });
      res.on('aborted', () => { broken ??= 'aborted'; });
      res.on('close', finish);
    });
    req.on('error', reject);
    req.end(payload);
  });
}
