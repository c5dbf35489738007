/**
 * The cgroup backend as users meet it. A systemd desktop hands each user a delegated cgroup subtree; here root
 * makes one, hands it to an unprivileged uid and starts the real server as that uid inside it
 * (fixtures/cgroup-launch.mjs). The same uid outside any delegated cgroup falls back to /proc tracking and
 * says why. A cgroup left by a supervisor that died with its server is swept by the next server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanupBackendFor } from '../../lib/supervisor/parent/cleanup-backend.ts';
import { cgroupMembers, runCgroupDir } from '../../lib/process/cgroup.ts';
import { identityOf } from '../../lib/process/proc-stat.ts';
import { readProcStat, readProcTable } from '../../lib/process/proc-table.ts';
import { startServer, MAIN, type ServerProcess } from './server-process.ts';
import { aliveNaming, killPids } from '../faults/escape-helpers.ts';
import { isJsonObject, parseObj, rpcResult, toolResultOf } from '../helpers/typed-results.ts';
import { waitFor } from '../helpers/proc.ts';

/** A uid with no other processes on these machines, so "nothing of it left" is a look at the process table. */
const TEST_UID = 61_231;
const LAUNCH = ['fixtures/cgroup-launch.mjs'];
const FAKE_BIN = ['--claude-bin', 'fixtures/fake-claude.mjs'];

function backendBase(): string {
  const backend = cleanupBackendFor('cgroup');
  assert.ok(backend.kind === 'cgroup');
  return backend.base;
}

/** A cgroup under root's own, owned by TEST_UID as systemd delegates one (the directory and its procs files). */
function delegatedCgroup(): string {
  const dir = join(backendBase(), `crm-spec-delegated-${process.pid}-${Date.now()}`);
  mkdirSync(dir);
  for (const path of [dir, join(dir, 'cgroup.procs'), join(dir, 'cgroup.threads'), join(dir, 'cgroup.subtree_control')])
    chownSync(path, TEST_UID, TEST_UID);
  return dir;
}

function scratchFor(uid: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'crm-cgroup-'));
  chmodSync(dir, 0o755);
  chownSync(dir, uid, uid);
  return dir;
}

function startAs(cgroup: string | null, scratch: string, extraArgs: readonly string[] = []): ServerProcess {
  return startServer([...LAUNCH, cgroup ?? '-', String(TEST_UID), String(TEST_UID), '--', ...MAIN], [...FAKE_BIN, ...extraArgs], {
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: scratch,
      TMPDIR: scratch,
      FAKE_CLAUDE_SCENARIO: 'escape',
      FAKE_CLAUDE_ESCAPE: 'bash_setsid,double_fork',
      FAKE_CLAUDE_READY_FILE: join(scratch, 'ready.jsonl'),
    },
  });
}

async function handshake(server: ServerProcess): Promise<void> {
  server.send({
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '0' } },
  });
  await server.response('init');
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

async function capabilitiesCleanup(server: ServerProcess): Promise<Record<string, unknown>> {
  server.send({ jsonrpc: '2.0', id: 'caps', method: 'resources/read', params: { uri: 'claude-run://capabilities' } });
  const contents = rpcResult(await server.response('caps'))['contents'];
  assert.ok(Array.isArray(contents) && isJsonObject(contents[0]));
  const cleanup = parseObj(String(contents[0]['text']), 'capabilities')['cleanup'];
  assert.ok(isJsonObject(cleanup));
  return cleanup;
}

/** How long a result call waits for the run to settle (a busy machine's /proc ladder takes seconds). */
const RESULT_WAIT_SECONDS = 30;

async function runOnce(server: ServerProcess, cwd: string): Promise<Record<string, unknown>> {
  server.send({ jsonrpc: '2.0', id: 'run', method: 'tools/call', params: { name: 'claude.run.start', arguments: { prompt: 'x', cwd } } });
  const started = toolResultOf(rpcResult(await server.response('run')));
  server.send({
    jsonrpc: '2.0',
    id: 'result',
    method: 'tools/call',
    params: { name: 'claude.run.result', arguments: { run_id: started['run_id'], wait_seconds: RESULT_WAIT_SECONDS, detail: 'full' } },
  });
  // The response comes when the run settles or the wait ends: the deadline outlasts the wait.
  const result = toolResultOf(rpcResult(await server.response('result', (RESULT_WAIT_SECONDS + 15) * 1000)));
  assert.equal(result['completed'], true, JSON.stringify(result));
  return result;
}

const uidProcesses = (): number[] =>
  readProcTable()
    .filter((s) => s.pid !== process.pid)
    .filter((s) => {
      try {
        return readFileUid(s.pid) === TEST_UID;
      } catch {
        return false;
      }
    })
    .map((s) => s.pid);

function readFileUid(pid: number): number | null {
  const status = process.getBuiltinModule('node:fs').readFileSync(`/proc/${pid}/status`, 'latin1');
  const match = /^Uid:\s+(\d+)/m.exec(status);
  return match === null ? null : Number(match[1]);
}

function removeEmptyTree(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) removeEmptyTree(join(dir, entry.name));
  rmdirSync(dir);
}

async function endServer(server: ServerProcess): Promise<void> {
  server.child.stdin.end();
  await server.exited();
}

test('an unprivileged user in a delegated cgroup: each run is born in a cgroup of its own there, ended, proven, removed', async () => {
  const delegated = delegatedCgroup();
  const scratch = scratchFor(TEST_UID);
  const server = startAs(delegated, scratch);
  try {
    await handshake(server);
    const cleanup = await capabilitiesCleanup(server);
    assert.deepEqual({ backend: cleanup['backend'], cgroup: cleanup['cgroup'] }, { backend: 'cgroup', cgroup: delegated });
    const result = await runOnce(server, scratch);
    assert.equal(result['cleanup_confirmed'], true, JSON.stringify(result['cleanup_error']));
    assert.equal(result['cleanup_proof'], 'cgroup');
    // The escapees were born (as the uid) and are gone; no run cgroup is left under the delegated one.
    assert.deepEqual(aliveNaming(join(scratch, 'ready.jsonl')), []);
    await endServer(server);
    assert.deepEqual(
      readdirSync(delegated, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name),
      [],
    );
    await waitFor('no process of the test uid', () => uidProcesses().length === 0, 10_000);
  } finally {
    server.kill();
    killPids(uidProcesses());
    rmSync(scratch, { recursive: true, force: true });
    await waitFor('the delegated cgroup empty', () => (cgroupMembers(delegated) ?? []).length === 0, 10_000);
    // A run cgroup is left only when the test already failed (a server killed mid-run): remove it too, so that
    // failure, not this cleanup's EBUSY, is what the file reports.
    removeEmptyTree(delegated);
  }
});

test('the same user outside any writable cgroup: /proc tracking, with the reason, and runs still proven', async () => {
  const scratch = scratchFor(TEST_UID);
  const server = startAs(null, scratch);
  try {
    await handshake(server);
    const cleanup = await capabilitiesCleanup(server);
    assert.equal(cleanup['backend'], 'process_scan');
    assert.equal(cleanup['fallback_reason'], 'not_writable');
    const result = await runOnce(server, scratch);
    assert.equal(result['cleanup_confirmed'], true, JSON.stringify(result['cleanup_error']));
    assert.equal(result['cleanup_proof'], 'process_scan');
    assert.deepEqual(aliveNaming(join(scratch, 'ready.jsonl')), []);
    await endServer(server);
  } finally {
    server.kill();
    killPids(uidProcesses());
    rmSync(scratch, { recursive: true, force: true });
  }
});

test('--cleanup-backend=cgroup where none can be had: the server refuses to run anything and says why', async () => {
  const scratch = scratchFor(TEST_UID);
  const server = startAs(null, scratch, ['--cleanup-backend=cgroup']);
  try {
    await handshake(server);
    server.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
    const response = await server.response('list');
    assert.ok(isJsonObject(response['error']), JSON.stringify(response));
    const { code } = await server.exited();
    assert.equal(code, 1);
    assert.match(server.stderr(), /cgroup cleanup backend is not available here \(not_writable\)/);
    assert.deepEqual(aliveNaming(join(scratch, 'ready.jsonl')), []);
  } finally {
    server.kill();
    rmSync(scratch, { recursive: true, force: true });
  }
});

test('a run cgroup whose supervisor and server both died is swept, processes and all, by the next server', async () => {
  // A private base, so that no other server on this machine (another suite running at once) sweeps it first:
  // the server is started inside it and sweeps only its own cgroup's children.
  const base = join(backendBase(), `crm-spec-sweep-${process.pid}-${Date.now()}`);
  mkdirSync(base);
  // An owner that is certainly dead: a process that has exited, named by its pid and start time.
  const gone = spawn('/bin/true');
  const stat = readProcStat(gone.pid ?? -1);
  await new Promise((resolve) => gone.once('exit', resolve));
  assert.ok(stat !== null);
  const leftover = runCgroupDir(base, identityOf(stat));
  assert.ok(leftover !== null);
  mkdirSync(leftover);
  const scratch = mkdtempSync(join(tmpdir(), 'crm-cgroup-'));
  const marker = join(scratch, 'orphan-marker');
  writeFileSync(marker, '');
  // The orphan: born in the leftover cgroup by a launcher that moves itself there first.
  const orphanLauncher = spawn(process.execPath, [...LAUNCH, leftover, '0', '0', '--', '-e', 'setInterval(() => {}, 1 << 30)', marker], {
    stdio: 'ignore',
    detached: true,
  });
  let server: ServerProcess | null = null;
  try {
    await waitFor('the orphan in the leftover cgroup', () => (cgroupMembers(leftover) ?? []).length === 2, 10_000);
    server = startServer([...LAUNCH, base, '0', '0', '--', ...MAIN], FAKE_BIN);
    await handshake(server);
    server.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
    await server.response('list');
    await waitFor('the leftover cgroup swept', () => !existsSync(leftover), 10_000);
    await waitFor('the orphan gone', () => aliveNaming(marker).length === 0, 10_000);
    await endServer(server);
  } finally {
    server?.kill();
    orphanLauncher.kill('SIGKILL');
    killPids(aliveNaming(marker));
    if (existsSync(leftover)) {
      await waitFor('leftover empty', () => (cgroupMembers(leftover) ?? []).length === 0, 10_000).catch(() => {});
      rmdirSync(leftover);
    }
    await waitFor('the private base empty', () => (cgroupMembers(base) ?? []).length === 0, 10_000).catch(() => {});
    rmdirSync(base);
    rmSync(scratch, { recursive: true, force: true });
  }
});
