/**
 * The version answer bound to the file that gave it: a spare checks the version while idle and a run in the
 * same directory uses that answer only while the file (machine code, answering itself) is unchanged; the supervisor refuses to start a file that is no longer
 * the one whose version was checked; an idle supervisor stops scanning /proc once its probe left nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  renameSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { prepareSupervisor, type ProbeSpec } from '../../../lib/supervisor/parent/run-supervised.ts';
import { createSparePool, type SparePool } from '../../../lib/supervisor/parent/spare.ts';
import { fileIdentity } from '../../../lib/supervisor/file-id.ts';
import { SPAWN_ERROR_FILE_CHANGED } from '../../../lib/supervisor/protocol.ts';
import { pollUntil } from '../../helpers/poll.ts';
import { readFakeRecord, recordFiles } from '../../helpers/tool-harness.ts';
import { baseEnv, FAKE_CLAUDE, stdoutEvents } from '../harness.ts';
import { counting } from '../../helpers/counting-supervisors.ts';

const RUN_ARGS = ['-p', '--output-format', 'stream-json', '--verbose', '--', 'hi'];

interface Bin {
  readonly dir: string;
  /** The path runs use: a symlink, as npm's `.bin/claude` is. */
  readonly link: string;
  readonly records: string;
  readonly env: Record<string, string>;
  /** argv of every process started from the bin so far (the fake records one file per process). */
  invocations(): string[][];
  /** Points the link at another executable (as an upgrade re-links the bin): printing `version`. */
  relink(version: string): void;
  cleanup(): void;
}

function makeBin(): Bin {
  const dir = mkdtempSync(join(tmpdir(), 'early-probe-'));
  const link = join(dir, 'claude');
  const records = join(dir, 'records');
  mkdirSync(records);
  // A private copy of the fake (and the module it imports), so changing it never touches other specs' fixture.
  const copy = join(dir, 'fake-claude.mjs');
  copyFileSync(FAKE_CLAUDE, copy);
  copyFileSync(join(dirname(FAKE_CLAUDE), 'fake-claude-sessions.mjs'), join(dir, 'fake-claude-sessions.mjs'));
  chmodSync(copy, 0o755);
  symlinkSync(copy, link);
  const env = baseEnv({ FAKE_CLAUDE_SCENARIO: 'ok', FAKE_CLAUDE_RECORD_DIR: records });
  return {
    dir,
    link,
    records,
    env,
    invocations: () => recordFiles(records).map((f) => readFakeRecord(f).argv),
    relink(version) {
      // A standalone stand-in: records itself like the fake, prints another version, runs nothing else.
      const other = join(dir, `claude-${version}.mjs`);
      writeFileSync(
        other,
        `#!${process.execPath}\nimport { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(records)} + '/' + process.pid + '.json', JSON.stringify({ argv: process.argv.slice(2), env: process.env, cwd: process.cwd() }));\nprocess.stdout.write(${JSON.stringify(`${version} (Claude Code)\n`)});\n`,
      );
      chmodSync(other, 0o755);
      const next = join(dir, 'claude.next');
      symlinkSync(other, next);
      renameSync(next, link);
    },
    cleanup: () => {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const versionProbe = (bin: { link: string; env: Record<string, string> }, cwd: string): ProbeSpec => ({
  file: bin.link,
  args: ['--version'],
  cwd,
  env: bin.env,
  timeoutMs: 10_000,
  maxStdoutBytes: 4096,
});
const versionCalls = (bin: Bin): number => bin.invocations().filter((argv) => argv.includes('--version')).length;

/** A machine-code "claude": a symlink to this node binary (its --version prints the Node version). */
function elfBin(): { dir: string; link: string; env: Record<string, string>; relink(target: string): void; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'early-probe-elf-'));
  const link = join(dir, 'claude');
  symlinkSync(process.execPath, link);
  return {
    dir,
    link,
    env: baseEnv(),
    relink(target) {
      const next = join(dir, 'claude.next');
      symlinkSync(target, next);
      renameSync(next, link);
    },
    cleanup: () => {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A pool whose spares check the machine-code bin early; `use` gets it with that answer in. */
async function withElfPool(use: (bin: ReturnType<typeof elfBin>, pool: SparePool, probes: ProbeSpec[]) => Promise<void>): Promise<void> {
  const bin = elfBin();
  const { prepare, probes, prepared } = counting();
  const pool = createSparePool(prepare, { earlyProbe: () => versionProbe(bin, '/') });
  try {
    pool.warm();
    await pollUntil("the spare's early answer", () => prepared[0]?.probedFile(bin.link) !== undefined, { timeoutMs: 15_000 });
    await use(bin, pool, probes);
  } finally {
    await pool.close();
    bin.cleanup();
  }
}

test("a spare checks the version while idle; the run's identical check is answered by it, not run again", () =>
  withElfPool(async (bin, pool, probes) => {
    const supervisor = pool.take();
    // The same directory as the early check: a shim may pick another version elsewhere (exe-binding.test.ts).
    const outcome = await supervisor.probe(versionProbe(bin, '/'));
    assert.deepEqual(outcome, { kind: 'exited', code: 0, signal: null, stdout: `${process.version}\n`, stdoutOverflow: false, stderr: '' });
    assert.equal(probes.length, 1, "the run's check did not run again");
    assert.equal(supervisor.probedFile(bin.link), fileIdentity(bin.link));
    const chunks: Buffer[] = [];
    const script = 'process.stdout.write(JSON.stringify({ type: "result" }) + "\\n")';
    const run = supervisor.start(
      { file: bin.link, args: ['-e', script], cwd: '/', env: bin.env, stdin: null },
      {
        onStdout: (c) => {
          chunks.push(c);
        },
      },
    );
    const done = await run.done;
    assert.equal(done.spawnError, null);
    assert.equal(done.cleanup?.confirmed, true);
    assert.equal(stdoutEvents(Buffer.concat(chunks)).at(-1)?.['type'], 'result');
    await supervisor.exited;
  }));

test('an early answer about a file that was replaced since is not used: the run checks again and gets the new answer', () =>
  withElfPool(async (bin, pool, probes) => {
    bin.relink('/bin/ls');
    const supervisor = pool.take();
    const outcome = await supervisor.probe(versionProbe(bin, '/'));
    assert.ok(outcome.kind === 'exited');
    assert.notEqual(outcome.stdout, `${process.version}\n`, 'the answer of the file as it is now');
    assert.equal(probes.length, 2);
    await supervisor.dispose();
    await supervisor.exited;
  }));

/** A pool whose spares check the (script) fake's version early; `use` gets it warm (its check done unless `early` is false). */
async function withWarmPool(use: (bin: Bin, pool: SparePool, probes: ProbeSpec[]) => Promise<void>, early = true): Promise<void> {
  const bin = makeBin();
  const { prepare, probes } = counting();
  const pool = createSparePool(prepare, { earlyProbe: () => versionProbe(bin, '/') });
  try {
    pool.warm();
    if (early) await pollUntil("the spare's early --version", () => versionCalls(bin) === 1, { timeoutMs: 15_000 });
    await use(bin, pool, probes);
  } finally {
    await pool.close();
    bin.cleanup();
  }
}

test("a script's early answer is not used (it may exec another binary, unseen by its identity): the run checks again", () =>
  withWarmPool(async (bin, pool, probes) => {
    const supervisor = pool.take();
    const outcome = await supervisor.probe(versionProbe(bin, '/'));
    assert.equal(outcome.kind, 'exited');
    assert.equal(versionCalls(bin), 2);
    assert.equal(probes.length, 2);
    await supervisor.dispose();
    await supervisor.exited;
  }));

test('a probe that does not match the early one waits for it, then runs (one probe at a time)', () =>
  withWarmPool(async (bin, pool) => {
    const supervisor = pool.take();
    const outcome = await supervisor.probe({ ...versionProbe(bin, '/'), args: ['--help'] });
    assert.equal(outcome.kind, 'exited');
    assert.equal(versionCalls(bin), 1);
    assert.equal(bin.invocations().length, 2);
    const cleanup = await supervisor.dispose();
    assert.equal(cleanup.cleanup?.confirmed, true);
  }, false));

for (const change of ['relinked', 'rewritten in place'] as const) {
  test(`a file ${change} between its version check and the spawn is refused: native_changed, nothing started`, async () => {
    const bin = makeBin();
    try {
      const supervisor = prepareSupervisor();
      const checked = await supervisor.probe(versionProbe(bin, '/'));
      assert.equal(checked.kind, 'exited');
      assert.notEqual(supervisor.probedFile(bin.link), null);
      if (change === 'relinked') bin.relink('2.1.332');
      else utimesSync(join(bin.dir, 'fake-claude.mjs'), new Date(), new Date()); // same inode, new times: the change time moves too
      const run = supervisor.start({ file: bin.link, args: RUN_ARGS, cwd: bin.dir, env: bin.env, stdin: null }, { onStdout: () => {} });
      const outcome = await run.done;
      assert.equal(outcome.spawnError?.code, SPAWN_ERROR_FILE_CHANGED);
      assert.equal(outcome.spawned, null, 'nothing was spawned');
      assert.equal(outcome.cleanup?.confirmed, true);
      assert.deepEqual(
        bin.invocations().map((argv) => argv.includes('--version')),
        [true],
        'only the version check ever ran',
      );
    } finally {
      bin.cleanup();
    }
  });
}

test('an idle spare stops scanning /proc once what its probe started is proven gone', () =>
  withWarmPool(async (_bin, pool) => {
    const pid = pool.sparePid();
    assert.ok(pid !== null);
    // utime + stime of the spare, in clock ticks (fields 14 and 15 of /proc/<pid>/stat).
    const cpu = (): number => {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      return Number(fields[11]) + Number(fields[12]);
    };
    // Idle means no CPU at all: a spare scanning every 100 ms spends several clock ticks a second.
    // The first second lets it prove the probe's leftovers gone (two scans) and go quiet.
    await pollUntil(
      'the idle spare to go quiet',
      async () => {
        const before = cpu();
        await delay(1000);
        return cpu() - before <= 1;
      },
      { timeoutMs: 20_000, intervalMs: 0 },
    );
    const before = cpu();
    await delay(2000);
    assert.ok(cpu() - before <= 1, `the idle spare used ${cpu() - before} clock ticks in 2 s`);
  }));
