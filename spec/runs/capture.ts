/** Real native captures (Claude Code 2.1.332 against a fake Messages API, stored in ./data; see data/README.md) fed through ingestion. */
import { readFileSync } from 'node:fs';
import { createIngest } from '../../lib/runs/ingest.ts';
import type { Ingest, IngestSignal } from '../../lib/runs/ingest.ts';

const DATA = new URL('./data/', import.meta.url);

export interface Capture {
  readonly frames: Buffer[];
  readonly stderr: string;
  readonly rc: number | null;
}

export function loadCapture(name: string): Capture {
  const stdout = readFileSync(new URL(`${name}.stdout`, DATA));
  const frames: Buffer[] = [];
  let start = 0;
  for (let nl = stdout.indexOf(0x0a); nl !== -1; nl = stdout.indexOf(0x0a, start)) {
    frames.push(stdout.subarray(start, nl));
    start = nl + 1;
  }
  if (start < stdout.length) frames.push(stdout.subarray(start));
  const read = (ext: string): string | null => {
    try {
      return readFileSync(new URL(`${name}.${ext}`, DATA), 'utf8');
    } catch {
      return null;
    }
  };
  const rc = read('rc');
  return { frames, stderr: read('stderr') ?? '', rc: rc === null ? null : Number(rc.trim()) };
}

/** Feeds every frame of a capture; returns the ingest and the signals that were not 'continue'. */
export function ingestCapture(name: string, ringId = 'run-test'): { ingest: Ingest; capture: Capture; signals: IngestSignal[] } {
  const capture = loadCapture(name);
  const ingest = createIngest({ ringId });
  const signals: IngestSignal[] = [];
  for (const frame of capture.frames) {
    const signal = ingest.onFrame(frame);
    if (signal !== 'continue') signals.push(signal);
  }
  return { ingest, capture, signals };
}

export function lines(name: string): string[] {
  return loadCapture(name).frames.map((frame) => frame.toString('utf8'));
}
