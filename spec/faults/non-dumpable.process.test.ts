/**
 * A daemon that makes itself non-dumpable (ssh-agent does): its own user cannot read its environment, so
 * whether it carries the run's marker is unknowable. The run must say so: reported as a survivor with the
 * reason, never confirmed, never signalled. Root reads every environment, so the server runs as `nobody`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKE_CLAUDE } from '../helpers/tool-harness.ts';
import { MAIN, ROOT } from '../e2e/server-process.ts';
import { aliveNaming, killPids } from './escape-helpers.ts';
import { createLineSplitter } from '../../lib/util/line-splitter.ts';
import { parseObj, rpcResult, toolResultOf } from '../helpers/typed-results.ts';
import { toolErrorOf } from '../helpers/tool-harness.ts';
import type { JsonObject } from '../../lib/util/json.ts';

const NOBODY = 65534;

test('a non-dumpable daemon started by the run (ssh-agent): ended when tracked, otherwise reported unverifiable; never confirmed while alive', async (t) => {
  const outcomes: string[] = [];
  for (let trial = 0; trial < 3; trial++) outcomes.push(await trialOnce(trial));
  t.diagnostic(`trials: ${outcomes.join(', ')}`);
});

async function trialOnce(trial: number): Promise<string> {
  const asRoot = process.getuid?.() === 0;
  const scratch = mkdtempSync(join(tmpdir(), 'crm-nondump-'));
  if (asRoot) chownSync(scratch, NOBODY, NOBODY);
  const ready = join(scratch, 'ready.jsonl');
  const server = spawn(process.execPath, [...MAIN, '--claude-bin', FAKE_CLAUDE], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
    ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: scratch,
      TMPDIR: scratch,
      FAKE_CLAUDE_SCENARIO: 'escape',
      FAKE_CLAUDE_ESCAPE: 'ssh_agent',
      FAKE_CLAUDE_READY_FILE: ready,
    },
  });
  const responses = new Map<unknown, JsonObject>();
  let notify = (): void => {};
  const splitter = createLineSplitter({
    maxLineBytes: 1 << 24,
    onLine: (line) => {
      const m = parseObj(line.toString('utf8'), 'a server stdout line');
      responses.set(m['id'], m);
      notify();
    },
    onOversize: () => {},
  });
  server.stdout.on('data', (chunk: Buffer) => splitter.push(chunk));
  const response = (id: number): Promise<JsonObject> =>
    new Promise((resolve) => {
      const check = (): void => {
        const m = responses.get(id);
        if (m) resolve(m);
      };
      notify = check;
      check();
    });
  const send = (m: unknown): void => {
    server.stdin.write(`${JSON.stringify(m)}\n`);
  };
  try {
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '0' } },
    });
    await response(1);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'claude.run.result', arguments: { run_id: 'run_none' } } });
    await response(2);
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'claude.run', arguments: { prompt: 'x', cwd: scratch } } });
    const result = toolResultOf(rpcResult(await response(3)));
    const agents = aliveNaming(`${ready}.agent.sock`);
    // Seen while its launcher lived, the daemon is the run's and is ended; born unseen, it is unknowable.
    if (agents.length === 0) {
      assert.equal(result['cleanup_confirmed'], true, JSON.stringify(result));
      return 'tracked and ended';
    }
    assert.equal(result['cleanup_confirmed'], false, `trial ${trial}: confirmed while the agent lives`);
    const cleanupError = toolErrorOf(result['cleanup_error']);
    assert.equal(cleanupError?.code, 'cleanup_unconfirmed');
    assert.match(String(cleanupError?.message), new RegExp(`unreadable environment.*${agents[0]}`));
    return 'reported unverifiable';
  } finally {
    killPids(aliveNaming(`${ready}.agent.sock`));
    server.stdin.end();
    await new Promise((resolve) => server.once('close', resolve));
    rmSync(scratch, { recursive: true, force: true });
  }
}
