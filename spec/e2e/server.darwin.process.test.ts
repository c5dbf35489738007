// The server as on a Mac (spec/helpers/darwin-server.ts): one run of the fake CLI, and no process of the
// server's touches what macOS lacks. The last test shows the trace check sees the Linux path when it runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertDarwinTrace, describeViolations, startDarwinServer } from '../helpers/darwin-server.ts';
import type { TraceVerdict } from '../helpers/darwin-trace.ts';
import { isJsonObject } from '../helpers/typed-results.ts';
import type { JsonObject } from '../../lib/util/json.ts';

test('darwin: a run of the fake CLI ends confirmed or honestly unconfirmed, by ps_scan, and no server or supervisor process touches /proc, /sys or a cgroup', async () => {
  const darwin = await startDarwinServer();
  let verdict: TraceVerdict | null = null;
  let run: { isError: boolean; full: JsonObject } | null = null;
  try {
    const out = await darwin.call('claude.run', { prompt: 'hi', cwd: darwin.dir });
    assert.equal(out.result?.['state'], 'completed', out.text.slice(0, 400));
    assert.equal(out.result?.['result'], 'Hi! I am a fake Claude.');
    run = { isError: out.isError, full: await darwin.full(out.result?.['run_id']) };
  } finally {
    verdict = await darwin.close();
  }
  // The trace first: what it names is what is left to port.
  assertDarwinTrace(verdict);
  assert.equal(run.full['cleanup_proof'], 'ps_scan', 'the portable source is the only one on darwin');
  if (run.full['cleanup_confirmed'] !== true) {
    // Honest: unconfirmed only with an error that says why, and the run is an error.
    assert.equal(run.full['cleanup_confirmed'], false);
    const error = run.full['cleanup_error'];
    assert.ok(isJsonObject(error) && typeof error['code'] === 'string' && typeof error['message'] === 'string', JSON.stringify(error));
    assert.equal(run.isError, true, 'an unconfirmed cleanup is an error of the run');
  }
});

test('linux (no preload platform): the same run under the same trace shows the Linux-only reads, so the check is not blind', async () => {
  const linux = await startDarwinServer({ env: { PRELOAD_PLATFORM: '' } });
  let verdict: TraceVerdict | null = null;
  try {
    const out = await linux.call('claude.run', { prompt: 'hi', cwd: linux.dir });
    assert.equal(out.result?.['state'], 'completed', out.text.slice(0, 400));
  } finally {
    verdict = await linux.close();
  }
  assert.deepEqual(verdict.unread.slice(0, 5), []);
  assert.deepEqual(verdict.unattributed, []);
  const rules = new Set(verdict.violations.map((v) => v.rule));
  // The supervisor's /proc tracking (or the cgroup backend) and the run's private directory owner both read /proc.
  assert.ok(rules.has("another process's /proc/<pid>"), describeViolations(verdict));
  assert.ok(
    verdict.violations.some((v) => v.pid !== verdict?.rootPid),
    `a supervisor's Linux reads are seen too:\n${describeViolations(verdict)}`,
  );
});
