import type { ProviderConfig } from '../../lib/tools/providers.ts';
// Shared by the session specs: an in-process adapter whose fake CLI writes timestamped ready lines, and
// readers for those lines and for the native transcript folder of a directory.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolHarness, type ToolHarness } from '../helpers/tool-harness.ts';
import { encodeProjectPath } from '../../lib/native/transcripts.ts';
import type { JsonObject } from '../../lib/util/json.ts';
import { pollUntil } from '../helpers/poll.ts';
import { at, num, objs, parseObj, str } from '../helpers/typed-results.ts';

/** Polls an async probe until it returns true; throws at the deadline. */
export async function waitUntil(what: string, probe: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  await pollUntil(what, probe, { timeoutMs });
}

/** One line the fake wrote: 'native' at start, 'session' once the conversation is chosen, 'exit' at the end. */
export interface FakeLine {
  readonly ready: string;
  readonly pid: number;
  readonly t: number;
  readonly session?: string;
  readonly prompt?: string;
  readonly code?: number;
}

/** The fake's ready lines so far (none before the file exists), each checked. */
export function readFakeLines(file: string): FakeLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.endsWith('}'))
    .map((l, i) => {
      const o = parseObj(l, `ready line ${i + 1}`);
      const what = `ready line ${i + 1}`;
      const line: FakeLine = { ready: str(o['ready'], `${what}: ready`), pid: num(o['pid'], `${what}: pid`), t: num(o['t'], `${what}: t`) };
      return {
        ...line,
        ...(o['session'] === undefined ? {} : { session: str(o['session'], `${what}: session`) }),
        ...(o['prompt'] === undefined ? {} : { prompt: str(o['prompt'], `${what}: prompt`) }),
        ...(o['code'] === undefined || o['code'] === null ? {} : { code: num(o['code'], `${what}: code`) }),
      };
    });
}

export interface SessionHarness extends ToolHarness {
  readonly readyFile: string;
  readonly recordFile: string;
  lines(): FakeLine[];
  /** The first and last timestamps of the fake process that ran `prompt` (its 'session' and 'exit' lines). */
  span(prompt: string): { start: number; end: number; session: string };
  /** Session ids of a directory's transcripts (the native config folder is $HOME/.claude). */
  transcripts(cwd: string): string[];
  subdir(name: string): string;
  /** Starts a detached run and returns its run_id (throws when the start failed). */
  start(args: JsonObject, meta?: JsonObject): Promise<string>;
  /** claude.run.result with wait_seconds 30, repeated until completed (hard deadline). */
  settled(runId: string): ReturnType<ToolHarness['settled']>;
}

export async function createSessionHarness(
  env: Record<string, string> = {},
  config: Partial<ProviderConfig> = {},
): Promise<SessionHarness> {
  const side = mkdtempSync(join(tmpdir(), 'crm-sess-side-'));
  const readyFile = join(side, 'ready.jsonl');
  const recordFile = join(side, 'record.json');
  const h = await createToolHarness({
    env: { FAKE_CLAUDE_READY_FILE: readyFile, FAKE_CLAUDE_RECORD: recordFile, ...env },
    protocolVersion: '2025-11-25',
    config,
  });
  const lines = (): FakeLine[] => readFakeLines(readyFile);
  const settled = (runId: string): ReturnType<ToolHarness['settled']> =>
    h.settled(runId, { waitSeconds: 30, timeoutMs: 120_000, detail: 'full' });
  return {
    ...h,
    readyFile,
    recordFile,
    lines,
    span(prompt) {
      const session = lines().find((l) => l.ready === 'session' && l.prompt === prompt);
      const exit = session && lines().find((l) => l.ready === 'exit' && l.pid === session.pid);
      if (!session || !exit) throw new Error(`no complete span for prompt ${prompt}`);
      return { start: session.t, end: exit.t, session: session.session ?? '' };
    },
    transcripts(cwd) {
      const dir = join(h.dir, '.claude', 'projects', encodeProjectPath(cwd));
      return existsSync(dir)
        ? readdirSync(dir)
            .filter((n) => n.endsWith('.jsonl'))
            .map((n) => n.slice(0, -6))
            .sort()
        : [];
    },
    subdir(name) {
      const dir = join(h.dir, name);
      mkdirSync(dir, { recursive: true });
      return dir;
    },
    async start(args, meta) {
      const out = await h.call('claude.run.start', args, meta);
      if (out.isError) throw new Error(`start failed: ${out.text}`);
      return String(out.result?.['run_id']);
    },
    settled,
    async close() {
      await h.close();
      rmSync(side, { recursive: true, force: true });
    },
  };
}

/** Waits until the run's state (claude.run.list) is `state`. */
export async function waitForState(h: ToolHarness, runId: string, state: string): Promise<void> {
  let last = '';
  await waitUntil(`run ${runId} in state ${state}`, async () => {
    const list = await h.call('claude.run.list', {});
    last = String(objs(at(list.result, 'runs'), 'runs').find((r) => r['run_id'] === runId)?.['state']);
    return last === state;
  }).catch((error: unknown) => {
    throw new Error(`${String(error)} (last state ${last})`);
  });
}
