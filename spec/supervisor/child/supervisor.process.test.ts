/** The supervisor child driven directly over its three pipes (no startSupervised), on the real process table. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getSupervisorCommand } from '../../../lib/supervisor/parent/supervisor-command.ts';
import { parseReportLine } from '../../../lib/supervisor/report-parse.ts';
import { platformArg, SPAWN_ERROR_NO_PLATFORM, type ControlMessage, type ReportMessage } from '../../../lib/supervisor/protocol.ts';
import { isRunning, waitForReady } from '../../helpers/proc.ts';
import { baseEnv, FAKE_CLAUDE } from '../harness.ts';
import { readFakeRecord } from '../../helpers/tool-harness.ts';
import { parseTableRequest } from '../../../lib/supervisor/table-wire.ts';

interface Direct {
  send(message: ControlMessage | string): void;
  endControl(): void;
  readonly pid: number;
  readonly done: Promise<{ code: number | null; signal: string | null; reports: ReportMessage[]; stdout: string }>;
}

function startDirect(extraFd?: number, platformArgs: readonly string[] = [platformArg('linux')]): Direct {
  const command = getSupervisorCommand();
  const stdio: ('pipe' | number)[] = ['pipe', 'pipe', 'pipe'];
  if (extraFd !== undefined) stdio.push(extraFd);
  const child = spawn(command.file, [...command.args, ...platformArgs], { detached: true, stdio });
  let stdout = '';
  let report = '';
  child.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    report += c.toString();
  });
  const done = new Promise<{ code: number | null; signal: string | null; reports: ReportMessage[]; stdout: string }>((resolve) => {
    child.on('close', (code, signal) => {
      const reports = report
        .split('\n')
        // A supervisor on the portable source asks for ps tables on this pipe; nobody answers here, so it runs its own.
        .filter((l) => l !== '' && parseTableRequest(l) === null)
        .map((l) => {
          const parsed = parseReportLine(l);
          assert.ok(parsed, `unparseable report line: ${l}`);
          return parsed;
        });
      resolve({ code, signal, reports, stdout });
    });
  });
  return {
    send: (m) => {
      child.stdin?.write((typeof m === 'string' ? m : JSON.stringify(m)) + '\n');
    },
    endControl: () => {
      child.stdin?.end();
    },
    pid: child.pid ?? -1,
    done,
  };
}

function spawnMessage(dir: string, scenario: string): ControlMessage {
  return {
    // A fresh marker per run, as the adapter makes: a shared one would let two suites running at once adopt
    // (and end) each other's processes.
    type: 'spawn',
    marker: randomBytes(16).toString('hex'),
    cgroup: null,
    cgroupRequired: false,
    file: FAKE_CLAUDE,
    args: ['-p', '--output-format', 'stream-json', '--', 'hi'],
    cwd: dir,
    stdin: null,
    keepStdinOpen: false,
    env: baseEnv({
      FAKE_CLAUDE_SCENARIO: scenario,
      FAKE_CLAUDE_READY_FILE: join(dir, 'ready'),
      FAKE_CLAUDE_RECORD: join(dir, 'record.json'),
    }),
    interruptGraceMs: 1000,
    termGraceMs: 500,
    killGraceMs: 500,
    trackIntervalMs: 50,
    expectFileId: null,
    expectImageId: null,
  };
}

const cleanupOf = (reports: ReportMessage[]) => {
  const last = reports.at(-1);
  if (last?.type !== 'cleanup') assert.fail(`the last report is a cleanup: ${JSON.stringify(last)}`);
  return last;
};

test('a descriptor leaked into the supervisor never reaches the native process', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sup-direct-'));
  const leaked = openSync(join(dir, 'leaked-file'), 'w');
  try {
    const sup = startDirect(leaked);
    sup.send(spawnMessage(dir, 'ok'));
    const { code, reports } = await sup.done;
    assert.equal(code, 0);
    assert.equal(cleanupOf(reports).confirmed, true);
    const { fds } = readFakeRecord(join(dir, 'record.json'));
    assert.ok(fds, 'the record lists the descriptors');
    assert.deepEqual(
      fds.filter((f) => f.target.endsWith('leaked-file')),
      [],
    );
    assert.deepEqual(
      fds.filter((f) => f.fd > 2 && f.cloexec !== true),
      [],
    );
  } finally {
    closeSync(leaked);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('told darwin, the supervisor closes a leaked file without /proc (the portable fstat probe)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sup-direct-'));
  const leaked = openSync(join(dir, 'leaked-file'), 'w');
  try {
    const sup = startDirect(leaked, [platformArg('darwin')]);
    sup.send(spawnMessage(dir, 'ok'));
    const { code, reports } = await sup.done;
    assert.equal(code, 0);
    // Told darwin it proves cleanup on ps tables: another job's orphan started meanwhile may leave it unconfirmed.
    const error = cleanupOf(reports).error;
    assert.ok(error === null || /^unattributed orphan\(s\) started during the run/.test(error), String(error));
    const { fds } = readFakeRecord(join(dir, 'record.json'));
    assert.ok(fds, 'the record lists the descriptors');
    assert.deepEqual(
      fds.filter((f) => f.target.endsWith('leaked-file')),
      [],
    );
  } finally {
    closeSync(leaked);
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const [name, args] of [
  ['no --platform', []],
  ['an unknown platform', ['--platform=win32']],
  ['two platforms', ['--platform=linux', '--platform=darwin']],
] as const) {
  test(`a supervisor started with ${name} starts nothing: spawn_error ${SPAWN_ERROR_NO_PLATFORM}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sup-direct-'));
    try {
      const sup = startDirect(undefined, args);
      sup.send(spawnMessage(dir, 'ok'));
      const { code, reports } = await sup.done;
      assert.equal(code, 0);
      assert.deepEqual(
        reports.map((r) => r.type),
        ['spawn_error', 'cleanup'],
      );
      assert.equal(reports[0]?.type === 'spawn_error' && reports[0].code, SPAWN_ERROR_NO_PLATFORM);
      assert.equal(cleanupOf(reports).confirmed, true);
      assert.throws(() => readFakeRecord(join(dir, 'record.json')), 'the native never started');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('control EOF before any spawn: confirmed empty cleanup, exit 0', async () => {
  const sup = startDirect();
  sup.endControl();
  const { code, reports, stdout } = await sup.done;
  assert.equal(code, 0);
  assert.equal(stdout, '');
  assert.deepEqual(reports, [
    {
      type: 'cleanup',
      confirmed: true,
      survivors: [],
      survivors_omitted: 0,
      steps: ['control_eof'],
      error: null,
      stderr_tail: '',
      stderr_bytes: 0,
      proof: 'process_scan',
    },
  ]);
});

test('a malformed first control line is a spawn_error, nothing is spawned', async () => {
  const sup = startDirect();
  sup.send('{"type":"spawn"}');
  const { code, reports } = await sup.done;
  assert.equal(code, 0);
  assert.deepEqual(
    reports.map((r) => r.type),
    ['spawn_error', 'cleanup'],
  );
  assert.equal(reports[0]?.type === 'spawn_error' && reports[0].code, 'BAD_CONTROL');
});

test('control EOF mid-run (adapter gone) runs the ladder from SIGINT', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sup-direct-'));
  try {
    const sup = startDirect();
    sup.send(spawnMessage(dir, 'sigint_result'));
    const native = await waitForReady(join(dir, 'ready'), 'handlers');
    sup.endControl();
    const { code, reports, stdout } = await sup.done;
    assert.equal(code, 0);
    const cleanup = cleanupOf(reports);
    assert.deepEqual(cleanup.steps, ['control_eof', 'SIGINT:native']);
    assert.equal(cleanup.confirmed, true);
    assert.match(stdout, /"terminal_reason":"aborted_streaming"/);
    assert.equal(isRunning(native), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('group-wide SIGTERM/SIGINT/SIGHUP do not kill the supervisor: it still reports', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sup-direct-'));
  try {
    const sup = startDirect();
    sup.send(spawnMessage(dir, 'sigint_result'));
    await waitForReady(join(dir, 'ready'), 'handlers');
    process.kill(-sup.pid, 'SIGHUP');
    const { code, reports } = await sup.done;
    assert.equal(code, 0);
    assert.deepEqual(
      reports.find((r) => r.type === 'exit'),
      { type: 'exit', code: null, signal: 'SIGHUP' },
    );
    assert.equal(cleanupOf(reports).confirmed, true);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const again = startDirect();
      again.send(spawnMessage(dir, 'hang_after_result'));
      await waitForReady(join(dir, 'ready'), 'result');
      process.kill(-again.pid, signal);
      const outcome = await again.done;
      assert.equal(outcome.code, 0, signal);
      assert.equal(cleanupOf(outcome.reports).confirmed, true, signal);
      rmSync(join(dir, 'ready'), { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('importing lib/supervisor/child/main.ts does not start a supervisor', async () => {
  const before = process.listenerCount('SIGTERM');
  const mod = await import('../../../lib/supervisor/child/main.ts');
  assert.equal(typeof mod.runSupervisor, 'function');
  assert.equal(process.listenerCount('SIGTERM'), before);
});
