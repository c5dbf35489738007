#!/usr/bin/env node
// Lists spec/**/*.test.ts itself (Node 20's --test takes no globs) and runs them under tsx.
// Usage: node scripts/run-specs.mjs [--unit] [--only <path-fragment>] [--exclude <path-fragment>]
// --unit runs only the pure tiers (no process spawned, no network, no real CLI): seconds, for the edit loop.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const pick = (flag) => { const i = args.indexOf(flag); return i >= 0 ? args[i + 1] : undefined; };
const only = pick('--only');
const exclude = pick('--exclude');
const unit = args.includes('--unit');

/** The pure tiers: whole folders, or single files of a mixed folder. A file here must not spawn processes. */
const UNIT_TIERS = [
  'spec/architecture/',
  'spec/util/',
  'spec/schema/',
  'spec/rpc/',
  'spec/handlers/',
  'spec/registry/',
  'spec/ingest/',
  'spec/native-contract/argv.test.ts',
  'spec/native-contract/schema-argv.test.ts',
  'spec/native-contract/tree.test.ts',
  'spec/native-contract/resolve-bin.test.ts',
  'spec/native-contract/transcripts.test.ts',
  'spec/cli/deferred-hosts.test.ts',
  'spec/cli/server-options.test.ts',
  'spec/supervisor/protocol-pure.test.ts',
  'spec/process/cgroup-paths.test.ts',
  'spec/supervisor/ladder-pure.test.ts',
  'spec/supervisor/sliced-reader.test.ts',
  'spec/tools/run-input.test.ts',
  'spec/worktree/worktree-pure.test.ts',
];

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...walk(full));
    else if (name.endsWith('.test.ts')) out.push(relative(root, full));
  }
  return out;
}

const files = walk(join(root, 'spec'))
  .filter((f) => (unit ? UNIT_TIERS.some((t) => f.startsWith(t)) : true))
  .filter((f) => (only ? f.includes(only) : true))
  .filter((f) => (exclude ? !f.includes(exclude) : true));
if (files.length === 0) {
  console.error('run-specs: no spec files matched');
  process.exit(1);
}
// The pure tiers run in one process (a per-file process costs a tsx start each, most of their time).
const argv = unit
  ? ['--import', 'tsx', join(root, 'scripts', 'import-specs.mjs'), ...files]
  : ['--import', 'tsx', '--test', '--test-timeout=240000', '--test-concurrency=2', ...files];
const child = spawn(process.execPath, argv, { cwd: root, stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
