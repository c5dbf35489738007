/** Shared setup for supervisor process specs: runs fixtures/fake-claude.mjs under startSupervised. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSupervised, type SupervisedRun, type SupervisedSpec } from '../../lib/supervisor/parent/run-supervised.ts';
import type { ReportMessage } from '../../lib/supervisor/protocol.ts';

export const FAKE_CLAUDE = fileURLToPath(new URL('../../fixtures/fake-claude.mjs', import.meta.url));

export interface FakeRun {
  readonly run: SupervisedRun;
  readonly dir: string;
  readonly readyFile: string;
  readonly recordFile: string;
  readonly reports: ReportMessage[];
  stdout(): Buffer;
  record(): { argv: string[]; stdin: string | null; env: Record<string, string>; fds: { fd: number; target: string; cloexec: boolean | null }[]; pid: number };
  dispose(): void;
}

export function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  // The fixture's shebang is `/usr/bin/env node`, so PATH must reach this node.
  return { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, ...extra };
}

export function startFake(scenario: string, options: { env?: Record<string, string>; args?: string[]; stdin?: string | null; spec?: Partial<SupervisedSpec> } = {}): FakeRun {
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
    { onStdout: (chunk) => { chunks.push(chunk); }, onReport: (message) => { reports.push(message); } },
  );
  return {
    run, dir, readyFile, recordFile, reports,
    stdout: () => Buffer.concat(chunks),
    record: () => JSON.parse(readFileSync(recordFile, 'utf8')),
    dispose: () => { rmSync(dir, { recursive: true, force: true }); },
  };
}

export function stdoutEvents(buffer: Buffer): Record<string, unknown>[] {
  return buffer.toString('utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}
