/**
 * The spec runner's own promise: nothing a spec file starts survives the file, whatever ends it. A nested
 * runner gets one fixture file that leaves a chain no /proc mark can follow (new session every 50 ms, cleared
 * environment, cwd `/`) and never ends; the nested runner is stopped by SIGINT once the chain lives, as
 * Ctrl-C would (a file's deadline takes the same reaping path). With a cgroup per file the chain is ended
 * for certain: once the runner has exited, no generation of it holds its lock. A runner killed outright
 * (SIGKILL: nothing reaps) leaves the chain; the next runner that starts ends it and removes what it left.
 * A process that only sits in a file's temp dir, or names it in its environment, is not provably the file's:
 * the runner reports it and leaves it alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { identify, isRunning, waitFor } from '../helpers/proc.ts';
import { parseObj, str } from '../helpers/typed-results.ts';
import { ownPidSpace } from '../../lib/process/proc-table.ts';

/** flock(1) exits with this when the lock is held. */
const LOCKED_STATUS = 75;
const RUNNER_EXIT_DEADLINE_MS = 60_000;

const chainAlive = (readyFile: string): boolean =>
  spawnSync('flock', ['-n', '-E', String(LOCKED_STATUS), `${readyFile}.lock`, 'true']).status === LOCKED_STATUS;

function startRunner(args: string[], readyFile: string, specDir = 'fixtures/runner') {
  const runner = spawn(process.execPath, ['scripts/run-specs.mjs', '--spec-dir', specDir, ...args], {
    env: { ...process.env, RUNNER_SPEC_READY_FILE: readyFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { text: '' };
  runner.stdout.on('data', (chunk: Buffer) => (output.text += chunk.toString('utf8')));
  runner.stderr.on('data', (chunk: Buffer) => (output.text += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => runner.on('exit', (code) => resolve(code)));
  const exitCode = async (): Promise<number | null> => {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      exited,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the runner did not exit: ${output.text}`)), RUNNER_EXIT_DEADLINE_MS);
      }),
    ]).finally(() => clearTimeout(timer));
  };
  return { runner, output, exitCode };
}

const fileSaidSo = (readyFile: string): boolean => existsSync(readyFile) && readFileSync(readyFile, 'utf8').includes('"file-said-so"');

/** What runs of the runner keep in this file's temp dir: their records and their files' temp dirs. */
const runnerEntries = (): string[] => readdirSync(tmpdir()).filter((name) => name.startsWith('crm-spec-'));

test('a stopped run ends what its file left, even a chain that re-spawns into new sessions with a cleared environment', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'runner-spec-'));
  const readyFile = join(dir, 'ready.jsonl');
  const { runner, output, exitCode } = startRunner([], readyFile);
  try {
    await waitFor('the chain the fixture file starts, and its word on stdout', () => chainAlive(readyFile) && fileSaidSo(readyFile));
    runner.kill('SIGINT');
    const code = await exitCode();
    const out = output.text;
    assert.equal(code, 130, out);
    assert.match(out, /killed: the run was stopped by SIGINT/);
    assert.match(out, /^chain-started$/m, "the file's own output is kept");
    // The kernel's word, not a scan's: a cgroup per file held every generation, and the runner measured it.
    assert.match(out, /# cpu: [\d.]+ s in 1 of 1 files/, out);
    assert.equal(chainAlive(readyFile), false, 'a generation of the chain outlived the runner');
    assert.deepEqual(runnerEntries(), [], 'a run that reaped keeps no record and no temp dir');
  } finally {
    writeFileSync(`${readyFile}.stop`, '');
    runner.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a run whose runner was SIGKILLed is ended by the next run that starts: chain, temp dirs, cgroup and record', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'runner-spec-'));
  const readyFile = join(dir, 'ready.jsonl');
  const first = startRunner([], readyFile);
  try {
    await waitFor('the chain the fixture file starts, and its word on stdout', () => chainAlive(readyFile) && fileSaidSo(readyFile));
    // While the first runner lives, a second one that starts leaves its run alone.
    const beside = startRunner(['--only', 'no-such-spec'], readyFile);
    assert.equal(await beside.exitCode(), 1, beside.output.text);
    assert.doesNotMatch(beside.output.text, /swept/);
    assert.equal(chainAlive(readyFile), true, 'a live run was swept');
    first.runner.kill('SIGKILL');
    assert.equal(await first.exitCode(), null);
    // Nothing reaped it: the chain still lives, and the killed run's record and temp dir are still there.
    assert.equal(chainAlive(readyFile), true, 'the chain should outlive a runner killed outright');
    assert.ok(
      runnerEntries().some((name) => name.endsWith('.run.json')),
      runnerEntries().join(', '),
    );
    // A second runner that matches no file still sweeps first, then says nothing matched.
    const second = startRunner(['--only', 'no-such-spec'], readyFile);
    assert.equal(await second.exitCode(), 1, second.output.text);
    assert.match(
      second.output.text,
      /run-specs: swept an earlier run [0-9a-f]+ \(its runner is gone\): [1-9]\d* processes ended, 1 temp dirs removed\n/,
    );
    assert.match(second.output.text, /run-specs: no spec files matched/);
    assert.equal(chainAlive(readyFile), false, 'a generation of the chain outlived the sweep');
    assert.deepEqual(runnerEntries(), []);
  } finally {
    writeFileSync(`${readyFile}.stop`, '');
    first.runner.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the sweep takes only whole records of this user that name their own run: a planted cgroup path is never used', async () => {
  const dead = spawnSync('true').pid;
  const space = `${ownPidSpace()?.pidNamespace} ${ownPidSpace()?.boot}`;
  const plant = (name: string, record: Record<string, unknown>): void => writeFileSync(join(tmpdir(), name), JSON.stringify(record));
  // Named for one run, naming another: not a record.
  plant('crm-spec-aaaaaaaa.run.json', { runId: 'bbbbbbbb', pid: dead, start: '1', space, cgroup: null });
  // A gone runner whose record names the whole cgroup tree: swept as a run with no cgroup.
  plant('crm-spec-cccccccc.run.json', { runId: 'cccccccc', pid: dead, start: '1', space, cgroup: '/sys/fs/cgroup' });
  try {
    const runner = startRunner(['--only', 'no-such-spec'], join(tmpdir(), 'unused.jsonl'));
    assert.equal(await runner.exitCode(), 1, runner.output.text);
    assert.match(runner.output.text, /swept an earlier run cccccccc \(its runner is gone\): 0 processes ended, 0 temp dirs removed\n/);
    assert.doesNotMatch(runner.output.text, /aaaaaaaa|bbbbbbbb/);
    assert.deepEqual(runnerEntries(), ['crm-spec-aaaaaaaa.run.json']);
  } finally {
    rmSync(join(tmpdir(), 'crm-spec-aaaaaaaa.run.json'), { force: true });
    rmSync(join(tmpdir(), 'crm-spec-cccccccc.run.json'), { force: true });
  }
});

test('the real-host tier runs at the highest priority where the runner may raise it, and says so where it may not', async () => {
  const runner = spawn(process.execPath, ['scripts/run-specs.mjs', '--spec-dir', 'fixtures/runner-priority'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  runner.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  runner.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => runner.on('exit', resolve));
  assert.equal(code, 0, out);
  if (process.getuid?.() === 0) assert.match(out, /^niceness -20$/m, out);
  else assert.match(out, /the real-host tier runs at normal priority \(EACCES\)[\s\S]*^niceness 0$/m, out);
});

/** The temp dir the bystander fixture file names once it runs (its TMPDIR, made by the nested runner). */
function fileDir(readyFile: string): string | undefined {
  if (!existsSync(readyFile)) return undefined;
  for (const line of readFileSync(readyFile, 'utf8')
    .split('\n')
    .filter((l) => l.endsWith('}'))) {
    const entry = parseObj(line, `a line of ${readyFile}`);
    if (entry['ready'] === 'file-dir') return str(entry['dir'], 'dir');
  }
  return undefined;
}

test("a bystander in a file's temp dir, or naming it in its environment, is reported and left alone", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'runner-spec-'));
  const readyFile = join(dir, 'ready.jsonl');
  const { output, exitCode } = startRunner([], readyFile, 'fixtures/runner-bystander');
  const bystanders: ReturnType<typeof spawn>[] = [];
  try {
    const fileTemp = await waitFor("the nested file's temp dir", () => fileDir(readyFile));
    // Started by this spec, not by the nested file: a shell someone opened there, a tool pointed at it.
    bystanders.push(spawn('sleep', ['3600'], { cwd: fileTemp, stdio: 'ignore' }));
    bystanders.push(spawn('sleep', ['3600'], { cwd: '/', env: { PATH: process.env['PATH'] ?? '', HOME: fileTemp }, stdio: 'ignore' }));
    const ids = bystanders.map((b) => identify(b.pid ?? 0));
    assert.ok(
      ids.every((id) => id !== null),
      'a bystander did not start',
    );
    writeFileSync(`${readyFile}.go`, '');
    const code = await exitCode();
    const out = output.text;
    assert.deepEqual(
      ids.map((id) => id !== null && isRunning(id)),
      [true, true],
      `the runner ended a bystander: ${out}`,
    );
    const [inDir, naming] = bystanders.map((b) => b.pid);
    assert.match(
      out,
      new RegExp(
        `LEAK SUSPECT \\S+: process ${inDir} \\(its cwd is in the file's temp dir\\) left alone, not provably the file's: sleep 3600`,
      ),
    );
    assert.match(out, new RegExp(`LEAK SUSPECT \\S+: process ${naming} \\(its environment names the file's temp dir\\) left alone`));
    // The file passed, but a person must look: a suspect fails the run as a leak of a passing file did.
    assert.match(out, /^# leaks: 0 processes, 2 suspects left alone, 0 temp entries \(from passing files: /m);
    assert.equal(code, 1, out);
    assert.deepEqual(runnerEntries(), [], 'the run keeps no record and no temp dir for what it left alone');
  } finally {
    for (const b of bystanders) b.kill('SIGKILL');
    writeFileSync(`${readyFile}.go`, '');
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the next run's sweep of a SIGKILLed run ends its file, and names a bystander in its temp dir without ending it", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'runner-spec-'));
  const readyFile = join(dir, 'ready.jsonl');
  const first = startRunner([], readyFile, 'fixtures/runner-bystander');
  let bystander: ReturnType<typeof spawn> | null = null;
  try {
    const fileTemp = await waitFor("the nested file's temp dir", () => fileDir(readyFile));
    bystander = spawn('sleep', ['3600'], { cwd: fileTemp, stdio: 'ignore' });
    const id = identify(bystander.pid ?? 0);
    assert.ok(id !== null, 'the bystander did not start');
    first.runner.kill('SIGKILL');
    assert.equal(await first.exitCode(), null);
    const second = startRunner(['--only', 'no-such-spec'], readyFile, 'fixtures/runner-bystander');
    assert.equal(await second.exitCode(), 1, second.output.text);
    // The file (its marker, its cgroup) is ended; the bystander is named and left.
    assert.match(
      second.output.text,
      new RegExp(
        `swept an earlier run [0-9a-f]+ \\(its runner is gone\\): 1 processes ended, 1 temp dirs removed; ` +
          `suspect left alone \\(its cwd is in a temp dir\\): process ${bystander.pid}: sleep 3600\\n`,
      ),
    );
    assert.equal(isRunning(id), true, `the sweep ended a bystander: ${second.output.text}`);
    assert.deepEqual(runnerEntries(), []);
  } finally {
    bystander?.kill('SIGKILL');
    writeFileSync(`${readyFile}.go`, '');
    first.runner.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
