import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isExecutableFile, resolveNativeBinary } from '../../lib/native/resolve-bin.ts';
import { isToolError } from '../../lib/tool-errors.ts';

function notFound(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(isToolError(error));
    assert.equal(error.code, 'native_not_found');
    assert.match(error.message, message);
    assert.match(error.message, /--claude-bin or CLAUDE_BIN/); // the hint
    return true;
  });
}

describe('resolveNativeBinary with an injected executable set', () => {
  const executables = new Set([
    '/opt/claude/bin/claude',
    '/usr/bin/claude',
    '/usr/local/bin/claude',
    '/usr/local/bin/claude-next',
    '/work/rel/bin/claude',
  ]);
  const isExecutable = (path: string): boolean => executables.has(path);
  const PATH = '/usr/local/bin:/usr/bin';
  const table: readonly [string, { cliFlag?: string; env: Record<string, string | undefined>; cwd?: string }, string][] = [
    [
      '--claude-bin wins over CLAUDE_BIN and PATH',
      { cliFlag: '/opt/claude/bin/claude', env: { CLAUDE_BIN: '/usr/bin/claude', PATH } },
      '/opt/claude/bin/claude',
    ],
    ['CLAUDE_BIN wins over PATH', { env: { CLAUDE_BIN: '/opt/claude/bin/claude', PATH } }, '/opt/claude/bin/claude'],
    ['PATH order: first entry that has claude', { env: { PATH } }, '/usr/local/bin/claude'],
    ['PATH order reversed', { env: { PATH: '/usr/bin:/usr/local/bin' } }, '/usr/bin/claude'],
    ['empty CLAUDE_BIN counts as unset', { env: { CLAUDE_BIN: '', PATH } }, '/usr/local/bin/claude'],
    ['empty --claude-bin counts as unset', { cliFlag: '', env: { PATH } }, '/usr/local/bin/claude'],
    ['bare name in CLAUDE_BIN is looked up on PATH', { env: { CLAUDE_BIN: 'claude-next', PATH } }, '/usr/local/bin/claude-next'],
    ['relative path resolves against cwd', { cliFlag: 'rel/bin/claude', env: { PATH: '' }, cwd: '/work' }, '/work/rel/bin/claude'],
    ['empty and relative PATH entries are skipped', { env: { PATH: ':.:bin:/usr/bin' } }, '/usr/bin/claude'],
  ];
  for (const [name, input, expected] of table) it(name, () => assert.equal(resolveNativeBinary({ ...input, isExecutable }), expected));

  it('a relative PATH entry is never searched, even when it would match', () => {
    notFound(
      () => resolveNativeBinary({ env: { PATH: 'usr/bin:.' }, cwd: '/', isExecutable: () => true }),
      /No executable "claude" on PATH/,
    );
  });
  it('missing PATH', () => notFound(() => resolveNativeBinary({ env: {}, isExecutable }), /No executable "claude" on PATH \(searched 0/));
  it('nothing on PATH', () =>
    notFound(() => resolveNativeBinary({ env: { PATH: '/nope:/also-nope' }, isExecutable }), /searched 2 absolute entries/));
  it('--claude-bin that is not executable does not fall back', () => {
    notFound(() => resolveNativeBinary({ cliFlag: '/nope/claude', env: { PATH }, isExecutable }), /--claude-bin names \/nope\/claude/);
  });
  it('CLAUDE_BIN that is not executable does not fall back', () => {
    notFound(() => resolveNativeBinary({ env: { CLAUDE_BIN: '/nope/claude', PATH }, isExecutable }), /CLAUDE_BIN names \/nope\/claude/);
  });
  it('bare name not on PATH', () =>
    notFound(() => resolveNativeBinary({ env: { CLAUDE_BIN: 'claude-x', PATH }, isExecutable }), /claude-x, which was not found/));
  it('relative path without a cwd', () =>
    notFound(() => resolveNativeBinary({ cliFlag: './claude', env: { PATH }, isExecutable }), /must be an absolute path/));
  it('NUL in the value', () =>
    notFound(() => resolveNativeBinary({ cliFlag: '/usr/bin/claude\0x', env: { PATH }, isExecutable }), /not a usable path/));
});

describe('resolveNativeBinary on a real filesystem', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'resolve-bin-'));
    for (const sub of ['a', 'b', 'c']) mkdirSync(join(dir, sub));
    writeFileSync(join(dir, 'a', 'claude'), '#!/bin/true\n', { mode: 0o644 }); // not executable
    mkdirSync(join(dir, 'b', 'claude')); // a directory
    writeFileSync(join(dir, 'c', 'claude'), '#!/bin/true\n');
    chmodSync(join(dir, 'c', 'claude'), 0o755);
    symlinkSync(join(dir, 'c', 'claude'), join(dir, 'link'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('skips a non-executable file and a directory named claude', () => {
    const PATH = [join(dir, 'a'), join(dir, 'b'), join(dir, 'c')].join(':');
    assert.equal(resolveNativeBinary({ env: { PATH } }), join(dir, 'c', 'claude'));
  });
  it('isExecutableFile follows symlinks and needs a regular executable file', () => {
    assert.equal(isExecutableFile(join(dir, 'link')), true);
    assert.equal(isExecutableFile(join(dir, 'b', 'claude')), false);
    assert.equal(isExecutableFile(join(dir, 'nope')), false);
  });
  it('a non-executable --claude-bin is native_not_found', () => {
    notFound(() => resolveNativeBinary({ cliFlag: join(dir, 'a', 'claude'), env: {} }), /not an executable file/);
  });
});
