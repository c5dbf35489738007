/**
 * The folder-level import direction of lib/, enforced. Every relative import in lib/ is read; a node is a
 * folder under lib/ (`supervisor/parent` is its own node) or a file directly in lib/ (`adapter.ts`).
 * The test fails on an import edge missing from ALLOWED, on a cycle among the actual edges, on a node of
 * lib/ that ALLOWED does not place, and when docs/architecture.md shows a different table.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LIB = join(ROOT, 'lib');

/** Each node and the nodes it may import, lowest layers first. */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  'util': [],
  'process': [],
  'tool-errors.ts': [],
  'version.ts': [],
  'contracts': ['tool-errors.ts', 'util'],
  'schema': ['contracts', 'util'],
  'native': ['contracts', 'tool-errors.ts', 'util'],
  'supervisor': ['native', 'process', 'util'],
  'supervisor/child': ['process', 'supervisor', 'util'],
  'supervisor/parent': ['native', 'process', 'supervisor', 'util'],
  'worktree': ['native', 'tool-errors.ts', 'util'],
  'runs': ['native', 'supervisor', 'supervisor/parent', 'tool-errors.ts', 'util', 'worktree'],
  'permission': ['native', 'process', 'runs', 'tool-errors.ts', 'util'],
  'rpc': ['schema', 'util'],
  'state': ['process', 'runs', 'util'],
  'tools': [
    'contracts',
    'native',
    'permission',
    'process',
    'rpc',
    'runs',
    'state',
    'supervisor',
    'supervisor/parent',
    'tool-errors.ts',
    'util',
    'version.ts',
    'worktree',
  ],
  'handlers': ['contracts', 'rpc', 'schema', 'tool-errors.ts', 'util'],
  'dispatch': ['contracts', 'handlers', 'rpc', 'util'],
  'adapter.ts': ['contracts', 'dispatch', 'handlers', 'util', 'version.ts'],
  'cli': [
    'adapter.ts',
    'contracts',
    'native',
    'rpc',
    'runs',
    'schema',
    'supervisor/parent',
    'tool-errors.ts',
    'tools',
    'util',
    'version.ts',
  ],
  'library.ts': ['adapter.ts', 'cli', 'process', 'supervisor/parent', 'tools'],
  'index.ts': [
    'adapter.ts',
    'contracts',
    'library.ts',
    'process',
    'rpc',
    'runs',
    'schema',
    'supervisor/child',
    'supervisor/parent',
    'tool-errors.ts',
    'tools',
  ],
  'npm-entry.ts': ['adapter.ts', 'index.ts', 'library.ts', 'supervisor/parent'],
  'main.ts': ['cli', 'native', 'npm-entry.ts', 'permission', 'process', 'rpc', 'supervisor/child', 'util', 'version.ts'],
};

/** Static `import … from`, `export … from`, side-effect `import '…'`, dynamic `import('…')` and `require('…')`. */
const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|\brequire\(\s*['"]([^'"]+)['"]\s*\)/gm;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The node of a path under lib/, or null for a path outside lib/ (such as cli-tree.json). */
function nodeOf(path: string): string | null {
  const rel = relative(LIB, path);
  if (rel.startsWith('..')) return null;
  const dir = dirname(rel);
  return dir === '.' ? rel : dir;
}

function importSpecifiers(source: string): string[] {
  return [...source.matchAll(SPECIFIER)].map((m) => m[1] ?? m[2] ?? m[3] ?? m[4] ?? '');
}

/** Actual edges: `from -> to` with the files that make them. */
function actualEdges(): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const file of tsFiles(LIB)) {
    const from = nodeOf(file);
    if (from === null) continue;
    for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue; // node: builtins; lib/ has no runtime dependencies
      const to = nodeOf(resolve(dirname(file), spec));
      if (to === null || to === from) continue;
      const key = `${from} -> ${to}`;
      edges.set(key, [...(edges.get(key) ?? []), relative(LIB, file)]);
    }
  }
  return edges;
}

/** A cycle as a node list (first node repeated at the end), or null. */
function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (n: string): string[] | null => {
    if (state.get(n) === 'done') return null;
    if (state.get(n) === 'open') return [...stack.slice(stack.indexOf(n)), n];
    state.set(n, 'open');
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      const found = visit(m);
      if (found !== null) return found;
    }
    stack.pop();
    state.set(n, 'done');
    return null;
  };
  for (const n of graph.keys()) {
    const found = visit(n);
    if (found !== null) return found;
  }
  return null;
}

test('the import scanner sees every import form lib/ uses', () => {
  const source = [
    "import { a } from './a.ts';",
    "import type { B } from '../b/b.ts';",
    "export { c } from './c.ts';",
    'export type { D } from "../d.ts";',
    "import './side-effect.ts';",
    "const m = await import('./lazy.ts');",
    "import {\n  e,\n  f,\n} from '../multi/line.ts';",
    "import { spawn } from 'node:child_process';",
    "module.exports = require('./as-module.ts');",
  ].join('\n');
  assert.deepEqual(importSpecifiers(source), [
    './a.ts',
    '../b/b.ts',
    './c.ts',
    '../d.ts',
    './side-effect.ts',
    './lazy.ts',
    '../multi/line.ts',
    'node:child_process',
    './as-module.ts',
  ]);
});

test('the cycle finder finds a cycle and accepts a DAG', () => {
  assert.deepEqual(
    findCycle(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a']],
      ]),
    ),
    ['a', 'b', 'c', 'a'],
  );
  assert.equal(
    findCycle(
      new Map([
        ['a', ['b', 'c']],
        ['b', ['c']],
        ['c', []],
      ]),
    ),
    null,
  );
});

test('the allowed table is itself a DAG', () => {
  assert.equal(findCycle(new Map(Object.entries(ALLOWED))), null);
});

test('every folder and top-level file of lib/ has a place in the table', () => {
  const nodes = new Set(
    tsFiles(LIB)
      .map((f) => nodeOf(f))
      .filter((n): n is string => n !== null),
  );
  assert.deepEqual([...nodes].filter((n) => !(n in ALLOWED)).sort(), []);
  assert.deepEqual(
    Object.keys(ALLOWED)
      .filter((n) => !nodes.has(n))
      .sort(),
    [],
  );
});

test('every import edge in lib/ is allowed, and the actual graph has no cycle', () => {
  const edges = actualEdges();
  const outside = [...edges]
    .filter(([key]) => {
      const [from = '', to = ''] = key.split(' -> ');
      return !(ALLOWED[from] ?? []).includes(to);
    })
    .map(([key, files]) => `${key} (${files.join(', ')})`);
  assert.deepEqual(outside, []);
  const graph = new Map<string, string[]>();
  for (const key of edges.keys()) {
    const [from = '', to = ''] = key.split(' -> ');
    graph.set(from, [...(graph.get(from) ?? []), to]);
  }
  assert.equal(findCycle(graph), null);
});

test('docs/architecture.md shows the same table', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const section = doc.split('\n## Layers')[1]?.split('\n## ')[0] ?? '';
  const rows = section
    .split('\n')
    .filter((l) => /^\| `/.test(l))
    .map((l) => {
      const [node = '', may = ''] = l
        .split('|')
        .slice(1, 3)
        .map((c) => c.trim());
      return [node.replaceAll('`', ''), may === '—' ? [] : may.split(',').map((s) => s.trim().replaceAll('`', ''))] as const;
    });
  assert.deepEqual(Object.fromEntries(rows), ALLOWED);
});
