/** Shared setup for supervisor process specs: runs fixtures/fake-claude.mjs under startSupervised. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSupervised, type SupervisedRun, type SupervisedSpec } from '../../lib/supervisor/parent/run-supervised.ts';
import type { ReportMessage } from '../../lib/supervisor/protocol.ts';
import type { CleanupBackend } from '../../lib/supervisor/parent/cleanup-backend.ts';
import type { TableSource } from '../../lib/supervisor/parent/table-source.ts';
import { jsonLines } from '../helpers/typed-results.ts';
import { readFakeRecord, type FakeRecord } from '../helpers/tool-harness.ts';
import type { JsonObject } from '../../lib/util/json.ts';

export const FAKE_CLAUDE = fileURLToPath(new URL('../../fixtures/fake-claude.mjs', import.meta.url));

export interface FakeRun {
  readonly run: SupervisedRun;
  readonly dir: string;
  readonly readyFile: string;
  readonly recordFile: string;
  readonly reports: ReportMessage[];
  stdout(): Buffer;
  /** What the fake recorded of its process, checked. */
  record(): FakeRecord;
  dispose(): void;
}

export function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  // The fixture's shebang is `/usr/bin/env node`, so PATH must reach this node.
  return { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, ...extra };
}

export function startFake(
  scenario: string,
  options: {
    env?: Record<string, string>;
    args?: string[];
    stdin?: string | null;
    spec?: Partial<SupervisedSpec>;
    cleanup?: CleanupBackend;
    onFallback?: () => void;
    /** Where its table requests go (ps_scan); default the process's one source. */
    tables?: TableSource;
  } = {},
): FakeRun {
  const dir = mkdtempSync(join(tmpdir(), 'sup-spec-'));
  const readyFile = join(dir, 'ready.jsonl');
  const recordFile = join(dir, 'record.json');
  const chunks: Buffer[] = [];
  const reports: ReportMessage[] = [];
  const run = startSupervised(
    {
      file: FAKE_CLAUDE,
      args: options.args ?? ['-p', '--output-format', 'stream-json', '--verbose', '--', 'hello'],
      cwd: dir,
      env: baseEnv({ FAKE_CLAUDE_SCENARIO: scenario, FAKE_CLAUDE_READY_FILE: readyFile, FAKE_CLAUDE_RECORD: recordFile, ...options.env }),
      stdin: options.stdin ?? null,
      ...options.spec,
    },
    {
      onStdout: (chunk) => {
        chunks.push(chunk);
      },
      onReport: (message) => {
        reports.push(message);
      },
    },
    {
      ...(options.cleanup === undefined ? {} : { cleanup: options.cleanup }),
      ...(options.onFallback === undefined ? {} : { onFallback: options.onFallback }),
      ...(options.tables === undefined ? {} : { tables: options.tables }),
    },
  );
  return {
    run,
    dir,
    readyFile,
    recordFile,
    reports,
    stdout: () => Buffer.concat(chunks),
    record: () => readFakeRecord(recordFile),
    dispose: () => {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function stdoutEvents(buffer: Buffer): JsonObject[] {
  return jsonLines(buffer.toString('utf8'), 'stdout line');
}
