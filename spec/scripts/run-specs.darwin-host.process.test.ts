// The runner on a host that is not Linux leaves the darwin-emulated specs out and says so; on Linux it runs them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PRELOAD = fileURLToPath(new URL('../../fixtures/platform-preload.cjs', import.meta.url));
const EMULATED = 'spec/e2e/server.darwin.process.test.ts';

function list(platform: string): { stdout: string; stderr: string } {
  const out = spawnSync(process.execPath, ['--require', PRELOAD, 'scripts/run-specs.mjs', '--list'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, PRELOAD_PLATFORM: platform },
  });
  assert.equal(out.status, 0, out.stderr);
  return { stdout: out.stdout, stderr: out.stderr };
}

test('on a darwin host the darwin-emulated specs are left out, and the runner says so; on Linux they are listed', () => {
  const mac = list('darwin');
  assert.ok(!mac.stdout.includes('.darwin.process.test.ts'), mac.stdout);
  assert.match(mac.stderr, /the darwin-emulated specs need a Linux host \(this is darwin\); they do not run here/);
  assert.ok(mac.stdout.includes('spec/e2e/lifecycle.process.test.ts'), 'the other process specs still run');
  const linux = list('linux');
  assert.ok(linux.stdout.includes(EMULATED), linux.stdout);
  assert.doesNotMatch(linux.stderr, /darwin-emulated/);
});
