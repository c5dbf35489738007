#!/usr/bin/env node
// Lists spec/**/*.test.ts itself (Node 20's --test takes no globs) and runs them under tsx.
// Usage: node scripts/run-specs.mjs [--only <path-fragment>] [--exclude <path-fragment>]
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const pick = (flag) => { const i = args.indexOf(flag); return i >= 0 ? args[i + 1] : undefined; };
const only = pick('--only');
const exclude = pick('--exclude');

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
  .filter((f) => (only ? f.includes(only) : true))
  .filter((f) => (exclude ? !f.includes(exclude) : true));
if (files.length === 0) {
  console.error('run-specs: no spec files matched');
  process.exit(1);
}
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-timeout=120000', '--test-concurrency=2', ...files],
  { cwd: root, stdio: 'inherit' },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
