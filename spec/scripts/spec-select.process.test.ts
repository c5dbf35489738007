/**
 * The runner's --path and --changed: the unit tier plus the specs that mirror the given (or git's changed)
 * files, a helper's importers, and a word on stderr for a source file no spec mirrors. Checked through
 * `--list`, which starts nothing; --changed in a throwaway git repository holding the runner and a spec tree.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** The runner and the spec-*.mjs modules it imports, copied into a throwaway repository. */
const RUNNER_FILES = readdirSync(join(ROOT, 'scripts')).filter((name) => name === 'run-specs.mjs' || /^spec-.*\.mjs$/.test(name));

function list(cwd: string, args: readonly string[]): { jobs: string[]; stderr: string } {
  const out = spawnSync(process.execPath, [join(cwd, 'scripts', 'run-specs.mjs'), '--list', ...args], { cwd, encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return { jobs: out.stdout.split('\n').filter((l) => l !== ''), stderr: out.stderr };
}

test('--path: the unit tier plus the mirrored specs, the importers of a helper, and a word for an unmirrored source', () => {
  const spare = list(ROOT, ['--path', 'lib/supervisor/parent/spare.ts']);
  assert.match(spare.jobs[0] ?? '', /^unit tier \(\d+ files\): /);
  assert.deepEqual(spare.jobs.slice(1), ['spec/supervisor/parent/spare.process.test.ts']);
  assert.equal(spare.stderr, '');

  const helper = list(ROOT, ['--path', 'spec/faults/escape-helpers.ts']);
  assert.ok(helper.jobs.includes('spec/faults/respawn-load.process.test.ts'), helper.jobs.join('\n'));
  assert.ok(!helper.jobs.includes('spec/supervisor/parent/spare.process.test.ts'));

  const unmirrored = list(ROOT, ['--path', 'lib/supervisor/child/stderr-tail.ts', '--path', 'README.md']);
  assert.equal(unmirrored.jobs.length, 1, unmirrored.jobs.join('\n'));
  assert.equal(unmirrored.stderr, 'run-specs: no spec mirrors lib/supervisor/child/stderr-tail.ts (only the unit tier runs for it)\n');
});

test('--changed: what git reports against HEAD, untracked files included, selects by the same rule', () => {
  const repo = mkdtempSync(join(tmpdir(), 'runner-changed-'));
  try {
    const write = (path: string, text = ''): void => {
      mkdirSync(dirname(join(repo, path)), { recursive: true });
      writeFileSync(join(repo, path), text);
    };
    for (const name of RUNNER_FILES) {
      mkdirSync(join(repo, 'scripts'), { recursive: true });
      copyFileSync(join(ROOT, 'scripts', name), join(repo, 'scripts', name));
    }
    symlinkSync(join(ROOT, 'node_modules'), join(repo, 'node_modules'));
    write('.gitignore', 'node_modules\n');
    for (const path of [
      'lib/a/b.ts',
      'lib/c.ts',
      'spec/a/b.test.ts',
      'spec/a/b.edge.process.test.ts',
      'spec/c.process.test.ts',
      'spec/d.process.test.ts',
    ])
      write(path);
    const git = (...args: string[]): void => {
      const out = spawnSync('git', ['-c', 'user.name=spec', '-c', 'user.email=spec@localhost', ...args], { cwd: repo, encoding: 'utf8' });
      assert.equal(out.status, 0, out.stderr);
    };
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'base');
    assert.deepEqual(list(repo, ['--changed']).jobs, ['spec/a/b.test.ts']);
    write('lib/a/b.ts', 'changed');
    write('spec/d.process.test.ts', 'changed');
    write('lib/e.ts', 'untracked');
    const changed = list(repo, ['--changed']);
    assert.deepEqual(changed.jobs, ['spec/a/b.test.ts', 'spec/a/b.edge.process.test.ts', 'spec/d.process.test.ts']);
    assert.equal(changed.stderr, 'run-specs: no spec mirrors lib/e.ts (only the unit tier runs for it)\n');
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});
