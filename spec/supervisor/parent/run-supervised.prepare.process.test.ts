/** prepareSupervisor(): an idle supervisor that either gets its run (start) or exits unused (dispose). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareSupervisor } from '../../../lib/supervisor/parent/run-supervised.ts';
import { getSupervisorEnv } from '../../../lib/supervisor/parent/supervisor-command.ts';
import { identify, isRunning, waitForGone } from '../../helpers/proc.ts';
import { baseEnv, FAKE_CLAUDE, stdoutEvents } from '../harness.ts';

test('dispose before start: the supervisor exits having spawned nothing', async () => {
  const supervisor = prepareSupervisor();
  assert.ok(supervisor.supervisorPid !== null);
  const id = identify(supervisor.supervisorPid);
  await supervisor.dispose();
  if (id) assert.equal(isRunning(id), false);
  assert.throws(
    () => supervisor.start({ file: FAKE_CLAUDE, args: [], cwd: '/', env: {}, stdin: null }, { onStdout: () => {} }),
    /disposed/,
  );
  // dispose is idempotent
  await supervisor.dispose();
});

test('start after the supervisor answered a probe: the run is the same as startSupervised', async () => {
  const supervisor = prepareSupervisor();
  const chunks: Buffer[] = [];
  // Booted and reading its control pipe, proven the way the version check proves it: a probe's answer.
  const probed = await supervisor.probe({
    file: process.execPath,
    args: ['--version'],
    cwd: '/',
    env: baseEnv(),
    timeoutMs: 30_000,
    maxStdoutBytes: 1024,
  });
  assert.equal(probed.kind, 'exited');
  assert.equal(probed.kind === 'exited' ? probed.stdout.trim() : null, process.version);
  const run = supervisor.start(
    { file: FAKE_CLAUDE, args: ['-p', '--output-format', 'stream-json', '--verbose', '--', 'hi'], cwd: '/', env: baseEnv(), stdin: null },
    {
      onStdout: (chunk) => {
        chunks.push(chunk);
      },
    },
  );
  assert.equal(run.supervisorPid, supervisor.supervisorPid);
  assert.throws(() => supervisor.start({ file: FAKE_CLAUDE, args: [], cwd: '/', env: {}, stdin: null }, { onStdout: () => {} }), /started/);
  const outcome = await run.done;
  assert.deepEqual(outcome.exit, { code: 0, signal: null });
  assert.equal(outcome.cleanup?.confirmed, true);
  assert.equal(stdoutEvents(Buffer.concat(chunks)).at(-1)?.['type'], 'result');
  assert.ok(outcome.spawned);
  await waitForGone([outcome.spawned]);
  // dispose after start only waits for the end
  await supervisor.dispose();
});

test('the supervisor environment drops NODE_OPTIONS, NODE_EXTRA_CA_CERTS and reserved host metadata, and silences warnings on its report pipe', () => {
  const env = getSupervisorEnv({
    PATH: '/bin',
    HOME: '/h',
    NODE_OPTIONS: '--require x',
    NODE_EXTRA_CA_CERTS: '/c.pem',
    COMPUTER_MCP_TOKEN: 's',
    computer_mcp_x: 's',
    NODE_V8_COVERAGE: '/cov',
    UNSET: undefined,
  });
  assert.deepEqual(env, { PATH: '/bin', HOME: '/h', NODE_V8_COVERAGE: '/cov', NODE_NO_WARNINGS: '1' });
});
