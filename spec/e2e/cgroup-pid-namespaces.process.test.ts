/**
 * Servers in two pid namespaces share one cgroup (a container beside its host, or `unshare -p` in a shell).
 * Each server sweeps, when it starts, the run cgroups whose owner is dead; the other's run cgroup must not be
 * one of them, although its owner's pid means nothing (or another process) in the sweeper's namespace. A
 * server inside its own namespace runs a slow run; a server in the spec's namespace starts (and sweeps) and
 * runs one; a second server in the first namespace starts (and sweeps). Both runs then end as they would alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanupBackendFor } from '../../lib/supervisor/parent/cleanup-backend.ts';
import { killCgroup, removeCgroupTree, waitUntilEmpty } from '../../lib/process/cgroup.ts';
import { startServer, MAIN, ROOT, type ServerProcess } from './server-process.ts';
import { rpcResult, toolResultOf } from '../helpers/typed-results.ts';
import { readReadyLines, waitFor } from '../helpers/proc.ts';

const LAUNCH = 'fixtures/cgroup-launch.mjs';
/** How long a result call waits for the run to settle (a busy machine's cleanup takes seconds). */
const RESULT_WAIT_SECONDS = 30;

interface Side {
  readonly scratch: string;
  readonly ready: string;
  readonly gate: string;
}

function side(name: string): Side {
  const scratch = mkdtempSync(join(tmpdir(), `crm-pidns-${name}-`));
  return { scratch, ready: join(scratch, 'ready.jsonl'), gate: join(scratch, 'gate') };
}

function envOf(s: Side): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: s.scratch,
    TMPDIR: s.scratch,
    FAKE_CLAUDE_SCENARIO: 'slow',
    FAKE_CLAUDE_SLOW_EVENTS: '1',
    FAKE_CLAUDE_DELAY_MS: '10',
    FAKE_CLAUDE_GATE_FILE: s.gate,
    FAKE_CLAUDE_READY_FILE: s.ready,
  };
}

/** The server, born in `base` (as root), under `wrapper` (a command and its arguments that then start node). */
function startIn(base: string, s: Side, wrapper: readonly string[] | null): ServerProcess {
  const server = [LAUNCH, base, '0', '0', '--', ...MAIN, '--claude-bin', 'fixtures/fake-claude.mjs'];
  const env = envOf(s);
  if (wrapper === null) return startServer(server, [], { env });
  const [command, ...args] = wrapper;
  return startServer([...args, process.execPath, ...server], [], { env, command: command! });
}

/** Initializes, then lists the tools: the providers (and with them the startup sweep) exist once it answers. */
async function startSweeping(server: ServerProcess): Promise<void> {
  server.send({
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '0' } },
  });
  await server.response('init');
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  server.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
  await server.response('list');
}

async function startRun(server: ServerProcess, s: Side): Promise<string> {
  server.send({
    jsonrpc: '2.0',
    id: 'run',
    method: 'tools/call',
    params: { name: 'claude.run.start', arguments: { prompt: 'x', cwd: s.scratch } },
  });
  const started = toolResultOf(rpcResult(await server.response('run')));
  await waitFor(`the native streaming (${s.ready})`, () => readReadyLines(s.ready).some((l) => l.ready === 'streaming'));
  return String(started['run_id']);
}

async function resultOf(server: ServerProcess, runId: string): Promise<Record<string, unknown>> {
  server.send({
    jsonrpc: '2.0',
    id: 'result',
    method: 'tools/call',
    params: { name: 'claude.run.result', arguments: { run_id: runId, wait_seconds: RESULT_WAIT_SECONDS, detail: 'full' } },
  });
  return toolResultOf(rpcResult(await server.response('result', (RESULT_WAIT_SECONDS + 15) * 1000)));
}

/** The pid namespace inode (the digits of `pid:[N]`) of a process of the spec's namespace. */
function namespaceOf(pid: number): string {
  return /^pid:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/ns/pid`))?.[1] ?? 'unreadable';
}

/** The process unshare forked: pid 1 of the new namespace (the launcher), as the spec's namespace numbers it. */
function childOf(pid: number): number | undefined {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'latin1').trim();
  return children === '' ? undefined : Number(children.split(' ')[0]);
}

const runCgroups = (base: string): string[] => readdirSync(base).filter((n) => n.startsWith('claude-run-mcp-'));

async function endServer(server: ServerProcess): Promise<void> {
  server.child.stdin.end();
  await server.exited();
}

test('two servers in two pid namespaces, each sweeping while the other runs: both runs succeed, each logs the other as foreign', async () => {
  const backend = cleanupBackendFor('cgroup');
  assert.ok(backend.kind === 'cgroup');
  // A private base: the servers sweep only what is under it, never another suite's runs.
  const base = join(backend.base, `crm-spec-pidns-${process.pid}-${Date.now()}`);
  mkdirSync(base);
  const inside = side('inside');
  const outside = side('outside');
  const second = side('again');
  const servers: ServerProcess[] = [];
  try {
    const inner = startIn(base, inside, ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child']);
    servers.push(inner);
    await startSweeping(inner);
    const innerRun = await startRun(inner, inside);
    const init = await waitFor('pid 1 of the new namespace', () => childOf(inner.child.pid ?? -1));
    const innerNs = namespaceOf(init);
    assert.notEqual(innerNs, namespaceOf(process.pid), 'the first server has a pid namespace of its own');

    const outer = startIn(base, outside, null);
    servers.push(outer);
    await startSweeping(outer);
    const outerRun = await startRun(outer, outside);
    const names = runCgroups(base);

    // A second server in the first namespace sweeps while the outer run is live.
    const again = startIn(base, second, ['nsenter', `--target=${init}`, '--pid', '--mount', `--wd=${ROOT}`, '--']);
    servers.push(again);
    await startSweeping(again);

    writeFileSync(inside.gate, '');
    writeFileSync(outside.gate, '');
    const outcomes = [];
    for (const [server, runId] of [
      [inner, innerRun],
      [outer, outerRun],
    ] as const) {
      const r = await resultOf(server, runId);
      const error = r['error'];
      outcomes.push({
        completed: r['completed'],
        is_error: r['is_error'],
        error: error !== null && typeof error === 'object' ? (error as Record<string, unknown>)['code'] : error,
        cleanup_confirmed: r['cleanup_confirmed'],
        cleanup_proof: r['cleanup_proof'],
      });
    }
    const succeeded = { completed: true, is_error: false, error: null, cleanup_confirmed: true, cleanup_proof: 'cgroup' };
    assert.deepEqual(outcomes, [succeeded, succeeded], 'the inner run, then the outer one');
    // Both runs had a cgroup, each named in its owner's namespace (checked after the outcome, the symptom).
    assert.equal(names.length, 2, JSON.stringify(names));
    assert.ok(
      names.some((n) => n.startsWith(`claude-run-mcp-${BigInt(innerNs).toString(36)}.`)),
      `a run cgroup carries the inner namespace: ${JSON.stringify(names)}`,
    );
    // Each sweeper left the other namespace's live run cgroup, and said so.
    const foreignOne = 'left 1 (1 foreign)';
    await outer.waitUntil('the outer sweep report', () => (outer.stderr().includes(foreignOne) ? true : undefined));
    await again.waitUntil('the second inner sweep report', () => (again.stderr().includes(foreignOne) ? true : undefined));
    for (const server of [again, inner, outer]) await endServer(server);
    assert.deepEqual(runCgroups(base), []);
  } finally {
    // Every process the servers started, the servers and their launchers are in the private base (unshare and
    // nsenter end with them): after a failure mid-run one write ends them all.
    killCgroup(base);
    await waitUntilEmpty(base, 10_000);
    for (const server of servers) await server.exited().catch(() => server.kill());
    removeCgroupTree(base);
    for (const s of [inside, outside, second]) rmSync(s.scratch, { recursive: true, force: true });
  }
});
