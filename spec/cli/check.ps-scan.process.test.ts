/** `claude-run-mcp check --cleanup-backend ps_scan`: the check's own probes run under the portable source, and the report says so. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { getCheckReport, parseCheckArgs } from '../../lib/cli/check.ts';

const FAKE = fileURLToPath(new URL('../../fixtures/fake-version/fake-claude-version.mjs', import.meta.url));

test('check --cleanup-backend: parsed in both forms, refused with the choices otherwise', () => {
  assert.deepEqual(parseCheckArgs(['--cleanup-backend', 'ps_scan']), { kind: 'check', cliFlag: undefined, cleanupBackend: 'ps_scan' });
  assert.deepEqual(parseCheckArgs(['--cleanup-backend=process_scan', '--claude-bin', '/x']), {
    kind: 'check',
    cliFlag: '/x',
    cleanupBackend: 'process_scan',
  });
  for (const argv of [['--cleanup-backend'], ['--cleanup-backend', 'psscan'], ['--cleanup-backend=']])
    assert.deepEqual(parseCheckArgs(argv), {
      kind: 'error',
      message: '--cleanup-backend takes one of auto, cgroup, process_scan, ps_scan',
    });
});

test('check under ps_scan: the version and --help probes run in a ps_scan supervisor, and the report names the backend', async () => {
  const report = await getCheckReport({
    cliFlag: FAKE,
    cleanupBackend: 'ps_scan',
    env: { PATH: process.env['PATH'] ?? '', FAKE_VERSION_MODE: 'help', FAKE_HELP_FILE: '/dev/null' },
    write: () => {},
  });
  assert.ok(report.version.ok, JSON.stringify(report.version));
  assert.equal(report.cleanup['backend'], 'ps_scan');
  assert.equal(report.cleanup['fallback_reason'], 'forced_off');
});
