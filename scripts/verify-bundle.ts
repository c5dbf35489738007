/**
 * Audits the single-file bundle: rebuilds it twice into temp folders (byte-identical, equal to the
 * committed bundle.sha256), checks that every input is the project's own and every import a node:
 * builtin, that package.json has no dependency keys, and that the built file serves: executed through its
 * shebang it answers initialize, runs claude.run against the fake CLI through a supervisor that is the
 * bundle itself (`<bundle> __supervisor`), confirms cleanup, leaves no process behind, and exits on stdin EOF.
 *
 * Usage: node --import tsx scripts/verify-bundle.ts   (npm run verify:bundle; exit 1 on any failed check)
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readProcStat } from '../lib/process/proc-table.ts';
import { TOOL_NAMES } from '../lib/tools/declarations.ts';
import { buildBundle, BUNDLE_NAME, ESBUILD_VERSION, readCommittedHash, ROOT, SHEBANG, type BuiltBundle } from './build.ts';

export interface Check {
  readonly ok: boolean;
  readonly what: string;
}

const FAKE_CLAUDE = join(ROOT, 'fixtures', 'fake-claude.mjs');
const DEPENDENCY_KEYS = ['dependencies', 'optionalDependencies', 'peerDependencies', 'bundledDependencies', 'bundleDependencies'];
/** Hard deadline of each wait in the smoke test. */
const SMOKE_WAIT_MS = 30_000;
const EXIT_ON_EOF_MS = 5_000;

/** Static checks of one build: inputs, imports, shebang, region comments, and package.json. */
export function auditBuild(built: BuiltBundle, packageJson: Record<string, unknown>): Check[] {
  const checks: Check[] = [];
  const inputs = Object.keys(built.metafile.inputs);
  // cli-tree.json is the one input outside lib/: lib/native/tree.ts imports it as JSON (the pinned contract).
  const foreign = inputs.filter((p) => !(p.startsWith('lib/') && p.endsWith('.ts')) && p !== 'cli-tree.json');
  checks.push({
    ok: foreign.length === 0 && inputs.includes('lib/main.ts'),
    what: `every input is lib/**/*.ts or cli-tree.json (${inputs.length} inputs${foreign.length > 0 ? `; foreign: ${foreign.join(', ')}` : ''})`,
  });
  const imports = Object.values(built.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
  const nonBuiltin = [...new Set(imports.filter((p) => !p.startsWith('node:')))];
  checks.push({
    ok: nonBuiltin.length === 0,
    what: `every import is node:* (${new Set(imports).size} distinct${nonBuiltin.length > 0 ? `; others: ${nonBuiltin.join(', ')}` : ''})`,
  });
  const present = DEPENDENCY_KEYS.filter((k) => k in packageJson);
  checks.push({
    ok: present.length === 0,
    what: `package.json has no dependency keys${present.length > 0 ? ` (found ${present.join(', ')})` : ''}`,
  });
  const text = readFileSync(built.file, 'utf8');
  checks.push({ ok: text.startsWith(`${SHEBANG}\n`), what: 'bundle starts with a node shebang' });
  const regions = [...text.matchAll(/^\/\/ (lib\/\S+\.ts|cli-tree\.json)$/gm)].map((m) => m[1]);
  const missing = inputs.filter((p) => !regions.includes(p));
  checks.push({
    ok: missing.length === 0,
    what: `every input has a // region comment (${regions.length} regions${missing.length > 0 ? `; missing: ${missing.join(', ')}` : ''})`,
  });
  return checks;
}

/** Runs the built file as a server against the fake CLI; every step is a check. */
export async function smokeTest(bundle: string): Promise<Check[]> {
  const checks: Check[] = [];
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crm-smoke-')));
  const readyFile = join(dir, 'ready.jsonl');
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: dir,
    FAKE_CLAUDE_SCENARIO: 'slow',
    FAKE_CLAUDE_SLOW_EVENTS: '3',
    FAKE_CLAUDE_DELAY_MS: '100',
    FAKE_CLAUDE_READY_FILE: readyFile,
  };
  // Executed directly: this also proves the shebang and the executable bit.
  const child = spawn(bundle, ['--claude-bin', FAKE_CLAUDE], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
  });
  const messages: Record<string, unknown>[] = [];
  let pending = '';
  let stderr = '';
  let nonJson = 0;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      try {
        messages.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        nonJson++;
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const send = (message: unknown): void => {
    child.stdin.write(`${JSON.stringify(message)}\n`);
  };
  const response = (id: number): Promise<Record<string, unknown>> =>
    waitFor(() => messages.find((m) => m['id'] === id), `response ${id} (stderr: ${stderr.slice(-500)})`);

  try {
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'verify-bundle', version: '0' } },
    });
    const init = await response(1);
    const initResult = init['result'] as Record<string, unknown> | undefined;
    checks.push({
      ok: initResult?.['protocolVersion'] === '2025-06-18',
      what: 'bundle answers initialize with the requested supported date',
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const tools =
      (((await response(2))['result'] as Record<string, unknown> | undefined)?.['tools'] as Array<{ name: string }> | undefined) ?? [];
    checks.push({
      ok: tools.length === TOOL_NAMES.length && tools.every((t, i) => t.name === TOOL_NAMES[i]),
      what: `bundle lists the ${TOOL_NAMES.length} tools (${tools.map((t) => t.name).join(', ')})`,
    });

    send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'claude.run', arguments: { prompt: 'say hi', cwd: dir }, _meta: { progressToken: 'p' } },
    });
    const native = await waitFor(() => readReady(readyFile, 'native'), 'the fake CLI to start');
    const supervisorPid = readPpid(native.pid);
    const supervisorArgv = supervisorPid === null ? [] : readCmdline(supervisorPid);
    checks.push({
      ok:
        supervisorArgv.length === 4 &&
        supervisorArgv[1] === realpathSync(bundle) &&
        supervisorArgv[2] === '__supervisor' &&
        supervisorArgv[3] === '--platform=linux',
      what: `the native process's parent is the bundle as supervisor (argv: ${JSON.stringify(supervisorArgv.slice(1))})`,
    });
    const run = await response(3);
    const structured = (
      (run['result'] as Record<string, unknown> | undefined)?.['structuredContent'] as Record<string, unknown> | undefined
    )?.['result'] as Record<string, unknown> | undefined;
    checks.push({
      ok: structured?.['is_error'] === false && structured['state'] === 'completed',
      what: `bundle runs claude.run against the fake CLI (is_error ${String(structured?.['is_error'])}, error ${JSON.stringify(structured?.['error'] ?? null)})`,
    });
    checks.push({ ok: structured?.['cleanup_confirmed'] === true, what: 'the supervisor reported confirmed cleanup' });
    const progress = messages.filter((m) => m['method'] === 'notifications/progress').length;
    checks.push({ ok: progress > 0, what: `progress notifications arrived (${progress})` });
    // The run settles on the supervisor's final report, so the native is gone by then; the supervisor itself
    // exits right after writing it (Node's teardown): poll for it with a hard deadline.
    checks.push({ ok: !existsSync(`/proc/${native.pid}`), what: 'the native process no longer exists when the response arrives' });
    const supervisorGone = supervisorPid === null || (await pollGone(supervisorPid, 5_000));
    checks.push({ ok: supervisorGone, what: 'the supervisor exits right after its report (within 5 s)' });

    const started = performance.now();
    child.stdin.end();
    const code = await Promise.race([exited, sleep(EXIT_ON_EOF_MS).then(() => 'hung' as const)]);
    checks.push({
      ok: code === 0,
      what: `bundle exits 0 on stdin EOF (${code === 'hung' ? `did not exit within ${EXIT_ON_EOF_MS} ms` : `code ${String(code)} after ${Math.round(performance.now() - started)} ms`})`,
    });
    checks.push({ ok: nonJson === 0, what: 'nothing but JSON-RPC reached stdout' });
  } catch (error) {
    checks.push({ ok: false, what: `smoke test: ${error instanceof Error ? error.message : String(error)}` });
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
  return checks;
}

async function waitFor<T>(probe: () => T | undefined | null, what: string): Promise<T> {
  const deadline = performance.now() + SMOKE_WAIT_MS;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== null) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });
}

function readReady(file: string, what: string): { pid: number } | undefined {
  if (!existsSync(file)) return undefined;
  // Only complete lines: the fixture may be appending while we read.
  for (const line of readFileSync(file, 'utf8').split('\n').slice(0, -1)) {
    const entry = JSON.parse(line) as { ready?: string; pid?: number };
    if (entry.ready === what && typeof entry.pid === 'number') return { pid: entry.pid };
  }
  return undefined;
}

function readPpid(pid: number): number | null {
  return readProcStat(pid)?.ppid ?? null;
}

function readCmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((part) => part !== '');
  } catch {
    return [];
  }
}

async function main(): Promise<number> {
  const failures: string[] = [];
  const report = (checks: readonly Check[]): void => {
    for (const check of checks) {
      process.stdout.write(`${check.ok ? 'ok  ' : 'FAIL'} ${check.what}\n`);
      if (!check.ok) failures.push(check.what);
    }
  };
  const dirA = mkdtempSync(join(tmpdir(), 'crm-bundle-a-'));
  const dirB = mkdtempSync(join(tmpdir(), 'crm-bundle-b-'));
  try {
    const a = await buildBundle(dirA);
    const b = await buildBundle(dirB);
    const committed = readCommittedHash();
    report([
      {
        ok: readFileSync(a.file).equals(readFileSync(b.file)),
        what: `two builds are byte-identical (${a.bytes} bytes, esbuild ${ESBUILD_VERSION}, node ${process.version})`,
      },
      {
        ok: committed === a.sha256,
        what: `sha256 ${a.sha256} equals bundle.sha256 (${committed ?? 'missing or malformed'}); after a lib/ change run \`npm run build\` and commit bundle.sha256`,
      },
    ]);
    const distFile = join(ROOT, 'dist', BUNDLE_NAME);
    if (existsSync(distFile)) {
      report([
        {
          ok: readFileSync(distFile).equals(readFileSync(a.file)),
          what: `dist/${BUNDLE_NAME} equals the fresh build (else run \`npm run build\`)`,
        },
      ]);
    }
    report(auditBuild(a, JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>));
    report(await smokeTest(a.file));
  } finally {
    rmSync(dirA, { recursive: true, force: true });
    rmSync(dirB, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    process.stdout.write(`verify-bundle: ${failures.length} check(s) failed\n`);
    return 1;
  }
  process.stdout.write(`verify-bundle: all checks passed (${BUNDLE_NAME})\n`);
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main();
}

async function pollGone(pid: number, deadlineMs: number): Promise<boolean> {
  const until = Date.now() + deadlineMs;
  while (existsSync(`/proc/${pid}`)) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}
