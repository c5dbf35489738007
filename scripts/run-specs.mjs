#!/usr/bin/env node
// Lists spec/**/*.test.ts itself and runs them under tsx, a few files at a time, each file in its own process
// with its own temp dir, and ends whatever a file leaves behind (scripts/spec-reap.mjs), however the file ended.
// Usage: node scripts/run-specs.mjs [--unit | --fast] [--only <path-fragment>]... [--exclude <path-fragment>]...
//          [--concurrency N] [--file-timeout-seconds S] [--spec-dir D] [--path F]... [--changed] [--list]
// The real-host tier (*.host.test.ts) runs first, one file at a time with nothing beside it, at raised priority;
// the rest share the slots (one per core, at least two, unless --concurrency says), but for the portable
// source's files (ps-scan, *.darwin.process), which run last, one at a time with nothing beside them.
// --unit runs only the pure tiers (no process spawned, no network, no real CLI): seconds, for the edit loop.
// --fast runs everything but the real-binary and real-host tiers: the unit tier plus the process tiers.
// --only and --exclude may be repeated: a file runs when it matches any --only and no --exclude.
// --list prints the processes the selection would start, one a line, and runs nothing.
// A runner that starts first ends what an earlier run left if that run's runner was killed before it could
// reap (scripts/spec-orphans.mjs), and says so on stderr.
// --path <file> (repeatable) runs the unit tier plus the specs of that source or spec file (spec/README.md's
// mirror rule); --changed does so for every file git reports changed against HEAD, untracked ones included.
import { chmodSync, mkdirSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { availableParallelism, setPriority, tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { SPEC_MARKER_ENV, killGroup, killOwned, removeTempDir, scanOwned, waitGone } from './spec-reap.mjs';
import { readStat } from './spec-lib.mjs';
import { prepareSpecBundle } from './spec-bundle.mjs';
import { cpuSeconds, enterFileCgroup, openRunCgroup, removeTreeWithin } from './spec-cgroup.mjs';
import { changedPaths, mirrorPrefix, readSpecText, specsCovering } from './spec-select.mjs';
import { forgetRun, recordRun, rewriteRun, sweepOrphanedRuns } from './spec-orphans.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * A spec's tier is the last part of its name before `.test.ts` (spec/README.md): none is the pure unit tier
 * (no process spawned, no socket, no real binary; --unit runs these in one process), `.process` starts
 * processes, `.native` runs the real claude binary, `.host` runs the real Claude Code as this server's host.
 */
const TIERS = ['process', 'native', 'host'];
const tierOf = (file) => TIERS.find((tier) => file.endsWith(`.${tier}.test.ts`)) ?? 'unit';

/** What --fast leaves out: the real binary, the real host, and the packaged artefacts (npm pack, .mcpb). */
const isRealTier = (file) => tierOf(file) === 'native' || tierOf(file) === 'host' || file.startsWith('spec/ship/');
/**
 * The darwin-emulated specs (docs/platforms.md) emulate macOS on Linux with strace and procps: on any other host
 * they cannot run, and on a Mac the other process specs run as darwin for real. Left out there, and said so.
 */
const isDarwinEmulated = (file) => file.endsWith('.darwin.process.test.ts');

/**
 * One file per core (at least two). Two per core ran alone 18 % faster (236 s against 288 s on two cores) but
 * two suites at once took longer (533 s against 411 s) and load near 18 failed timing-bound cases.
 */
const DEFAULT_CONCURRENCY = Math.max(2, availableParallelism());
/**
 * The real-host tier's niceness where the runner may raise it: the highest. A spec file at normal priority can
 * have many runnable processes (one keeps 1,500 and two busy loops), and each weighs as one against it.
 */
const HOST_TIER_NICENESS = -20;
/** Per file, as `--test-timeout=240000` was for the whole file under Node 20's `--test`. */
const DEFAULT_FILE_TIMEOUT_SECONDS = 240;
/** How long a passing file's processes may take to finish exiting after the file's own process has. */
const LEAK_GRACE_MS = 5_000;
/** Bound on the SIGKILL loop for one file (a process that survives it is reported). */
const REAP_DEADLINE_MS = 10_000;
/** Bound on the wait for a file's output pipes to close once its processes are gone. */
const PIPES_CLOSE_TIMEOUT_MS = 5_000;
const SLOWEST_SHOWN = 10;
/** The random part of a file's temp dir name (six characters, as mkdtemp's): a name taken first fails the run. */
const FILE_DIR_RANDOM_BYTES = 3;

/** tsx keeps its transform cache at <tmpdir>/tsx-<euid>: each file's temp dir links to the shared one, so a private TMPDIR costs no cold compile. */
const TSX_CACHE_NAME = `tsx-${process.geteuid?.() ?? 'user'}`;

const VALUE_FLAGS = ['--only', '--exclude', '--concurrency', '--file-timeout-seconds', '--spec-dir', '--path'];
const SWITCHES = ['--unit', '--fast', '--list', '--changed'];

function parseArgs(argv) {
  for (let i = 0; i < argv.length; i++) {
    if (VALUE_FLAGS.includes(argv[i]) && i + 1 < argv.length) i++;
    else if (!SWITCHES.includes(argv[i])) usage(`unknown or incomplete argument: ${argv[i]}`);
  }
  const all = (flag) => argv.flatMap((arg, i) => (arg === flag && i + 1 < argv.length ? [argv[i + 1]] : []));
  const one = (flag, fallback) => {
    const values = all(flag);
    if (values.length === 0) return fallback;
    const n = Number(values.at(-1));
    if (!Number.isInteger(n) || n < 1) usage(`${flag} takes a whole number of at least 1`);
    return n;
  };
  const unit = argv.includes('--unit');
  const fast = argv.includes('--fast');
  if (unit && fast) usage('--unit and --fast exclude each other');
  return {
    tier: unit ? 'unit' : fast ? 'fast' : 'all',
    only: all('--only'),
    exclude: all('--exclude'),
    concurrency: one('--concurrency', DEFAULT_CONCURRENCY),
    fileTimeoutMs: one('--file-timeout-seconds', DEFAULT_FILE_TIMEOUT_SECONDS) * 1000,
    list: argv.includes('--list'),
    // Where the spec files are (the runner's own spec points it at fixtures); relative to the repository.
    specDir: all('--spec-dir').at(-1) ?? 'spec',
    // The specs of these source or spec files (the mirror rule), with the whole unit tier; --changed: git's changes.
    paths: argv.includes('--changed') ? changedPaths(root) : all('--path'),
    covering: argv.includes('--changed') || argv.includes('--path'),
  };
}

function usage(why) {
  console.error(`run-specs: ${why}`);
  console.error(
    'usage: node scripts/run-specs.mjs [--unit | --fast] [--only <fragment>]... [--exclude <fragment>]... [--concurrency N] [--file-timeout-seconds S] [--spec-dir D] [--path F]... [--changed] [--list]',
  );
  process.exit(2);
}

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...walk(full));
    else if (name.endsWith('.test.ts')) out.push(relative(root, full));
  }
  return out;
}

function selectFiles(options) {
  const files = walk(join(root, options.specDir));
  const covering = options.covering ? new Set(specsCovering(options.paths, files, readSpecText(root))) : null;
  // Said, not hidden: a changed source file no spec mirrors is covered only by what the unit tier and others reach.
  for (const path of options.covering ? options.paths : [])
    if (mirrorPrefix(path) !== null && specsCovering([path], files, () => '').length === 0)
      process.stderr.write(`run-specs: no spec mirrors ${path} (only the unit tier runs for it)\n`);
  const emulationHost = process.platform === 'linux';
  if (!emulationHost && files.some(isDarwinEmulated))
    process.stderr.write(`run-specs: the darwin-emulated specs need a Linux host (this is ${process.platform}); they do not run here\n`);
  return files
    .filter((f) => emulationHost || !isDarwinEmulated(f))
    .filter((f) => covering === null || covering.has(f) || tierOf(f) === 'unit')
    .filter((f) => (options.tier === 'unit' ? tierOf(f) === 'unit' : true))
    .filter((f) => (options.tier === 'fast' ? !isRealTier(f) : true))
    .filter((f) => (options.only.length > 0 ? options.only.some((o) => f.includes(o)) : true))
    .filter((f) => !options.exclude.some((e) => f.includes(e)));
}

/**
 * One job per process: the pure tiers share one (a per-file process costs a tsx start each, most of their
 * time; they share no process-wide state), every other file gets its own. Files run directly, not under
 * `--test`: Node 20's `--test-timeout` is a kill of the whole file that drops its output, and the runner's
 * per-file deadline does the same with the output kept, one node start cheaper.
 */
function planJobs(files) {
  const unitFiles = files.filter((f) => tierOf(f) === 'unit');
  const jobs = [];
  if (unitFiles.length > 0) {
    jobs.push({
      label: unitFiles.length === 1 ? unitFiles[0] : `unit tier (${unitFiles.length} files)`,
      files: unitFiles,
      argv: ['--import', 'tsx', join(root, 'scripts', 'import-specs.mjs'), ...unitFiles],
    });
  }
  for (const file of files.filter((f) => tierOf(f) !== 'unit')) jobs.push({ label: file, files: [file], argv: ['--import', 'tsx', file] });
  return jobs.map((job, index) => ({ ...job, index }));
}

/**
 * Runs once before the first file starts: the place for a step every file shares (e.g. one build of the
 * bundle that the process tiers start servers from). Throwing fails the run before any file starts.
 */
async function beforeAllFiles(jobs) {
  // One bundle for the whole run (the process tiers start servers and supervisors from it); the pure tiers need none.
  if (jobs.every((job) => job.files.every((f) => tierOf(f) === 'unit'))) return;
  Object.assign(process.env, await prepareSpecBundle());
}

/**
 * State shared with the signal handlers: the running files (by their root's pid: the file's owner, and whether
 * its root was reaped yet), every temp dir so far, a stop.
 */
const run = {
  id: randomBytes(4).toString('hex'),
  running: new Map(),
  dirs: [],
  stopping: null,
  cgroup: null,
  record: null,
  // What the record says: the run's cgroup, and every file's temp dir by name.
  recorded: { cgroup: null, dirs: [] },
};

/**
 * Every process of the run's files: the marker's run prefix, the run's cgroup, and the sessions of roots not yet
 * reaped. No temp dir: a process that only points into one is reported with its file, never ended.
 */
function runOwner() {
  const roots = [...run.running.values()].flatMap((file) => file.owner.roots);
  return { markerPrefix: `${run.id}-`, roots, dirs: [], cgroup: run.cgroup?.dir ?? null };
}

/**
 * Ends a running file: everything provably its own (its session too, while its root holds its pid) and its
 * process group. A no-op once its root is reaped: its pid, the group's id, may then be another process's.
 */
function stopFile(file) {
  if (file.reaped) return;
  for (const p of scanOwned(file.owner).owned) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      /* gone between the scan and the kill */
    }
  }
  killGroup(file.pid);
}

/** Starts one job in a new session with its own TMPDIR and marker; resolves once it ended and was reaped. */
async function runJob(job, options) {
  const dir = makeFileDir(job);
  linkTsxCache(dir);
  const marker = `${run.id}-${job.index}`;
  const env = { ...process.env, TMPDIR: dir, TMUX_TMPDIR: dir, [SPEC_MARKER_ENV]: marker };
  const started = Date.now();
  const child = spawn(process.execPath, job.argv, { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = [];
  child.stdout.on('data', (chunk) => output.push(chunk));
  child.stderr.on('data', (chunk) => output.push(chunk));
  const pipesClosed = new Promise((resolve) => child.on('close', resolve));
  // At once, before the file's node has run a line (so before it can fork): all it starts is born inside.
  const cgroup = child.pid === undefined ? null : enterFileCgroup(run.cgroup, job.index, child.pid);
  // Unreaped until its exit event, so its stat is there to read: its identity bounds its session's mark.
  const rootStat = child.pid === undefined ? null : readStat(child.pid);
  const roots = rootStat === null ? [] : [{ pid: rootStat.pid, start: rootStat.start }];
  const owner = { markerEquals: marker, roots, dirs: [dir], cgroup };
  const file = { pid: child.pid, owner, reaped: child.pid === undefined };
  if (child.pid !== undefined) run.running.set(child.pid, file);
  if (isHostTier(job) && child.pid !== undefined) raisePriority(child.pid);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stopFile(file);
  }, options.fileTimeoutMs);
  const exit = await new Promise((resolve) => {
    child.on('error', (error) => resolve({ code: null, signal: null, error: error.message }));
    child.on('exit', (code, signal) => {
      // Said in the same tick as the reap: from here on its pid is free.
      file.reaped = true;
      resolve({ code, signal, error: null });
    });
  });
  clearTimeout(timer);
  const seconds = (Date.now() - started) / 1000;
  const stoppedBy = run.stopping?.signal ?? null;
  const passedProcess = exit.code === 0 && !timedOut && stoppedBy === null;
  const lingering = passedProcess ? await waitGone(owner, LEAK_GRACE_MS) : scanOwned(owner).owned;
  const { survivors, suspects } = await killOwned(owner, REAP_DEADLINE_MS);
  await Promise.race([pipesClosed, new Promise((resolve) => setTimeout(resolve, PIPES_CLOSE_TIMEOUT_MS).unref())]);
  if (child.pid !== undefined) run.running.delete(child.pid);
  const leftEntries = removeTempDir(dir, [TSX_CACHE_NAME]);
  const cpu = cgroup === null ? null : cpuSeconds(cgroup);
  if (cgroup !== null && !(await removeTreeWithin(cgroup, REAP_DEADLINE_MS))) leftEntries.push(`cgroup ${cgroup}`);
  const text = Buffer.concat(output).toString('utf8');
  return {
    job,
    exit,
    timedOut,
    stoppedBy,
    seconds,
    cpu,
    text,
    counts: parseCounts(text),
    lingering,
    survivors,
    suspects,
    leftEntries,
    timeoutSeconds: options.fileTimeoutMs / 1000,
  };
}

/**
 * A file's temp dir, named in the run's record before it is made (a runner killed in between leaves nothing
 * the next run's sweep cannot find), and made exclusively: whatever already has its name fails the run.
 */
function makeFileDir(job) {
  const dir = join(tmpdir(), `crm-spec-${run.id}-${job.index}-${randomBytes(FILE_DIR_RANDOM_BYTES).toString('hex')}`);
  run.recorded.dirs.push(basename(dir));
  rewriteRun(run.record, run.id, run.recorded);
  mkdirSync(dir);
  // The file's /tmp: as open as /tmp itself (sticky, world-writable), for specs that run a server as another uid.
  chmodSync(dir, 0o1777);
  run.dirs.push(dir);
  return dir;
}

function linkTsxCache(dir) {
  const shared = join(tmpdir(), TSX_CACHE_NAME);
  mkdirSync(shared, { recursive: true });
  symlinkSync(shared, join(dir, TSX_CACHE_NAME));
}

/** The reporter's closing counts (`# pass N` under TAP); the last block wins. Null when the file printed none. */
function parseCounts(text) {
  const counts = {};
  for (const match of text.matchAll(/^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) counts[match[1]] = Number(match[2]);
  return counts.tests === undefined ? null : counts;
}

function verdict(result) {
  if (result.timedOut) return `killed at the ${result.timeoutSeconds} s file deadline`;
  if (result.stoppedBy !== null) return `killed: the run was stopped by ${result.stoppedBy}`;
  if (result.exit.error !== null) return `could not start: ${result.exit.error}`;
  if (result.exit.signal !== null) return `ended by ${result.exit.signal}`;
  if (result.exit.code !== 0) return `exit ${result.exit.code}`;
  if (result.counts === null) return 'no test counts printed';
  if (result.counts.fail > 0 || result.counts.cancelled > 0) return 'tests failed';
  return 'ok';
}

function report(result) {
  const counts =
    result.counts === null
      ? 'no counts'
      : `pass ${result.counts.pass}, fail ${result.counts.fail}${result.counts.cancelled ? `, cancelled ${result.counts.cancelled}` : ''}`;
  const cpu = result.cpu === null ? '' : `, ${result.cpu.toFixed(1)} s CPU`;
  process.stdout.write(`# ── ${result.job.label}: ${verdict(result)} in ${result.seconds.toFixed(1)} s${cpu} (${counts})\n`);
  process.stdout.write(result.text.endsWith('\n') || result.text === '' ? result.text : `${result.text}\n`);
  for (const p of result.lingering)
    process.stderr.write(`run-specs: LEAK ${result.job.label}: process ${p.pid} outlived the file (by ${p.why}): ${p.cmdline}\n`);
  for (const p of result.survivors)
    process.stderr.write(
      `run-specs: LEAK ${result.job.label}: process ${p.pid} survived SIGKILL for ${REAP_DEADLINE_MS} ms: ${p.cmdline}\n`,
    );
  for (const p of result.suspects)
    process.stderr.write(
      `run-specs: LEAK SUSPECT ${result.job.label}: process ${p.pid} (its ${p.why === 'cwd' ? 'cwd is in' : 'environment names'} the file's temp dir) ` +
        `left alone, not provably the file's: ${p.cmdline}\n`,
    );
  if (result.leftEntries.length > 0)
    process.stderr.write(`run-specs: LEAK ${result.job.label}: left in its temp dir: ${result.leftEntries.join(', ')}\n`);
}

/** Runs the jobs `concurrency` at a time, reporting each as it ends. */
async function schedule(jobs, options) {
  const results = [];
  const runOne = async (job) => {
    const result = await runJob(job, options);
    report(result);
    results.push(result);
  };
  // The real-host tier first and alone: Claude Code gives a server 3 s to answer its discover probe, and a
  // second file's load must not decide whether the session it tests has tasks at all (tried beside the other
  // files at raised priority: with two suites at once its server answered 3.6-4.1 s after the spawn).
  for (const job of jobs.filter(isHostTier)) if (run.stopping === null) await runOne(job);
  const shared = jobs.filter((job) => !isHostTier(job) && !isPortableSource(job));
  let next = 0;
  const worker = async () => {
    while (next < shared.length && run.stopping === null) await runOne(shared[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, shared.length) }, worker));
  // The portable source's files last, one at a time: `ps` cannot tell an orphan of another file's run from one of
  // the run under test, so a neighbour's escapees would leave every run there honestly unconfirmed.
  for (const job of jobs.filter(isPortableSource)) if (run.stopping === null) await runOne(job);
  return results;
}

/** Files whose runs prove cleanup on ps tables (the ps_scan backend, the darwin-emulated tier). */
const isPortableSource = (job) => !isHostTier(job) && job.files.every((f) => isDarwinEmulated(f) || /ps-scan/.test(f));

/** The real-host tier's files (Claude Code as this server's host). */
const isHostTier = (job) => job.files.every((f) => tierOf(f) === 'host');

/**
 * The real-host tier also runs ahead of other work on the machine (a second suite, a build): what it starts
 * inherits the niceness, so Claude Code's 3 s discover deadline is met by the server it spawns, not by luck.
 * Set before the file's node forks anything; where the runner may not raise priority (not root), it runs as is.
 */
function raisePriority(pid) {
  try {
    setPriority(pid, HOST_TIER_NICENESS);
  } catch (error) {
    process.stderr.write(`run-specs: the real-host tier runs at normal priority (${error.code ?? error.message})\n`);
  }
}

function summarize(results, files, seconds) {
  const sum = (key) => results.reduce((total, r) => total + (r.counts?.[key] ?? 0), 0);
  const failed = results.filter((r) => verdict(r) !== 'ok');
  const leakedProcesses = results.reduce((n, r) => n + r.lingering.length + r.survivors.length, 0);
  const suspects = results.reduce((n, r) => n + r.suspects.length, 0);
  const leakedEntries = results.reduce((n, r) => n + r.leftEntries.length, 0);
  // A file that failed may well leave things behind (the runner ended them); a passing one must not, nor leave
  // a suspect: the runner cannot tell the file's escaped process from a bystander, so a person must look.
  const leaks = (r) => r.lingering.length + r.survivors.length + r.suspects.length + r.leftEntries.length;
  const leakedByPassing = results.filter((r) => verdict(r) === 'ok' && leaks(r) > 0);
  const lines = [
    `# run-specs: ${files.length} files in ${results.length} processes, ${seconds.toFixed(1)} s`,
    `# tests ${sum('tests')}: pass ${sum('pass')}, fail ${sum('fail')}, cancelled ${sum('cancelled')}, skipped ${sum('skipped')}, todo ${sum('todo')}`,
    `# leaks: ${leakedProcesses} processes, ${suspects} suspects left alone, ${leakedEntries} temp entries${leakedByPassing.length > 0 ? ` (from passing files: ${leakedByPassing.map((r) => r.job.label).join(', ')})` : ''}`,
    ...failed.map((r) => `# FAILED ${r.job.label}: ${verdict(r)}`),
    cpuLine(results),
    `# slowest (wall, and CPU of everything the file started where a cgroup per file could be had):`,
    ...[...results]
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, SLOWEST_SHOWN)
      .map(
        (r) =>
          `#   ${r.seconds.toFixed(1).padStart(6)} s  ${r.cpu === null ? '' : `${r.cpu.toFixed(1).padStart(6)} s CPU  `}${r.job.label}`,
      ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return failed.length === 0 && leakedByPassing.length === 0;
}

/** The files' CPU time in all (from their cgroups), against the machine's cores: what bounds the run's wall time. */
function cpuLine(results) {
  const measured = results.filter((r) => r.cpu !== null);
  if (measured.length === 0) return '# cpu: not measured (no cgroup per file here)';
  const total = measured.reduce((sum, r) => sum + r.cpu, 0);
  const cores = availableParallelism();
  return `# cpu: ${total.toFixed(1)} s in ${measured.length} of ${results.length} files: at least ${(total / cores).toFixed(1)} s on ${cores} cores`;
}

/** Ends every file still running and whatever any file of this run left, then removes every temp dir. */
async function reapRun() {
  for (const file of run.running.values()) stopFile(file);
  const { killed, survivors } = await killOwned(runOwner(), REAP_DEADLINE_MS);
  for (const dir of run.dirs) removeTempDir(dir, []);
  const cgroupLeft = run.cgroup !== null && !(await removeTreeWithin(run.cgroup.dir, REAP_DEADLINE_MS));
  if (cgroupLeft) process.stderr.write(`run-specs: LEAK: the run's cgroup ${run.cgroup.dir} could not be removed\n`);
  // Kept while something of the run may live: the next run's sweep ends it.
  if (run.record !== null && survivors.length === 0 && !cgroupLeft) forgetRun(run.record);
  return { killed, survivors };
}

/** A signal stops the run: no file starts, running files are killed and reaped as any file is, then the summary. */
function onSignal(signal, exitCode) {
  process.on(signal, () => {
    if (run.stopping !== null) return;
    run.stopping = { signal, exitCode };
    process.stderr.write(`run-specs: ${signal}: stopping, ending every spec process of this run\n`);
    for (const file of run.running.values()) stopFile(file);
  });
}

function noFilesMatched() {
  console.error('run-specs: no spec files matched');
  process.exit(1);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const files = selectFiles(options);
  const jobs = planJobs(files);
  if (options.list) {
    for (const job of jobs) process.stdout.write(`${job.label}${job.files.length > 1 ? `: ${job.files.join(' ')}` : ''}\n`);
    if (files.length === 0) noFilesMatched();
    return;
  }
  // Whatever else happens, a run that starts ends what an earlier run whose runner was killed left.
  for (const line of await sweepOrphanedRuns(tmpdir(), REAP_DEADLINE_MS)) process.stderr.write(`run-specs: swept an earlier ${line}\n`);
  if (files.length === 0) noFilesMatched();
  onSignal('SIGINT', 130);
  onSignal('SIGTERM', 143);
  onSignal('SIGHUP', 129);
  const started = Date.now();
  // The record comes first, then names the cgroup: a runner killed in between leaves nothing unrecorded.
  run.record = recordRun(tmpdir(), run.id, run.recorded);
  run.cgroup = openRunCgroup(run.id);
  if (run.cgroup !== null) {
    run.recorded.cgroup = run.cgroup.dir;
    rewriteRun(run.record, run.id, run.recorded);
  }
  let results;
  try {
    await beforeAllFiles(jobs);
    results = await schedule(jobs, options);
  } catch (error) {
    // A runner that cannot go on still reaps what it started before it fails.
    await reapRun();
    throw error;
  }
  const { killed } = await reapRun();
  for (const p of killed) process.stderr.write(`run-specs: LEAK after all files: process ${p.pid} (by ${p.why}): ${p.cmdline}\n`);
  const ok = summarize(results, files, (Date.now() - started) / 1000);
  if (run.stopping !== null) process.exit(run.stopping.exitCode);
  process.exit(ok && killed.length === 0 ? 0 : 1);
}

await main();
