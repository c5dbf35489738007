// The broker's socket either listens inside its private directory before the run starts, or the run is
// refused with a stable code and nothing is spawned or left behind: a path too long for a Unix socket
// (which libuv would cut and bind elsewhere) and a listen that fails.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createPermissionBroker, MAX_UNIX_SOCKET_PATH_BYTES } from '../../lib/permission/broker.ts';
import { PRIVATE_DIR_PREFIX } from '../../lib/permission/private-dir.ts';
import { createRuntime } from '../../lib/tools/runtime.ts';
import { createSessionLock } from '../../lib/runs/session-lock.ts';
import { isToolError, ToolError } from '../../lib/tool-errors.ts';
import { systemClock } from '../../lib/util/clock.ts';

const root = mkdtempSync(join(tmpdir(), 'crm-brk-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A fresh directory whose path is exactly `chars` bytes long (ASCII). */
function dirOfLength(chars: number): string {
  const parent = mkdtempSync(join(root, 'd-'));
  const pad = chars - parent.length - 1;
  assert.ok(pad > 0, `the temp directory ${parent} is too long for this spec`);
  const dir = join(parent, 'p'.repeat(pad));
  mkdirSync(dir);
  assert.equal(Buffer.byteLength(dir), chars);
  return dir;
}

/** `<base>/crm-perm-XXXXXX/s` with the default prefix: this many bytes besides the base. */
const SOCKET_PATH_OVERHEAD_BYTES = `/${PRIVATE_DIR_PREFIX}XXXXXX/s`.length;

/** The ToolError `fn` throws; a broker it made instead is closed before the spec fails (no open socket hangs the file). */
const refusal = (fn: () => unknown): ToolError => {
  let made: unknown;
  try {
    made = fn();
  } catch (error) {
    if (isToolError(error)) return error;
    throw error;
  }
  if (typeof made === 'object' && made !== null && 'close' in made && typeof made.close === 'function') made.close();
  assert.fail('not refused');
};

describe('the broker socket', () => {
  it('a base directory of 90 characters: the ask_host run is refused, nothing spawned, nothing left', async () => {
    const base = dirOfLength(90);
    const spawned: string[] = [];
    const runtime = createRuntime({
      clock: systemClock,
      random: (n) => randomBytes(n),
      checkVersion: async () => {
        spawned.push('version');
        throw new ToolError('native_not_found', 'no binary in this spec');
      },
      prepareSupervisor: () => {
        spawned.push('supervisor');
        throw new Error('nothing may be spawned');
      },
      isGone: () => true,
      sessionLock: createSessionLock(),
      listSessionIds: () => [],
      nativeEnv: {},
      askHost: { flags: { flag: '--permission-prompt-tool', mcp_config_flag: '--mcp-config' }, baseDir: base },
    });
    const request = {
      prompt: 'x',
      cwd: '/',
      permissionMode: 'dontAsk' as const,
      nativeOptions: {},
      session: { kind: 'fresh' as const },
      timeoutMs: 60_000,
      idleTimeoutMs: null,
      askHost: { timeoutMs: 60_000, defaultMode: true },
    };
    try {
      const error = refusal(() =>
        runtime.start({ request, bin: '/bin/true', argv: { args: ['-p'], stdin: 'x', streamInput: false } }, { acquiredBy: null, sync: false }),
      );
      assert.equal(error.code, 'ask_host_socket_path_too_long');
      assert.match(error.message, new RegExp(`${90 + SOCKET_PATH_OVERHEAD_BYTES} bytes, over the ${MAX_UNIX_SOCKET_PATH_BYTES} bytes`));
      assert.deepEqual(spawned, []);
      assert.deepEqual(runtime.list(), [], 'no run was reserved');
      assert.deepEqual(readdirSync(base), [], 'no private directory');
      assert.deepEqual(readdirSync(dirname(base)), [basename(base)], 'nothing bound beside it');
    } finally {
      await runtime.close();
    }
  });

  it(`a socket path of exactly ${MAX_UNIX_SOCKET_PATH_BYTES} bytes listens where it is named; one byte more is refused`, () => {
    const fits = dirOfLength(MAX_UNIX_SOCKET_PATH_BYTES - SOCKET_PATH_OVERHEAD_BYTES);
    const broker = createPermissionBroker({ clock: systemClock, random: (n) => randomBytes(n), boundMs: 1000, baseDir: fits });
    try {
      assert.equal(Buffer.byteLength(broker.socketPath), MAX_UNIX_SOCKET_PATH_BYTES);
      assert.equal(statSync(broker.socketPath).isSocket(), true);
    } finally {
      broker.close();
    }
    assert.deepEqual(readdirSync(fits), []);
    const over = dirOfLength(MAX_UNIX_SOCKET_PATH_BYTES - SOCKET_PATH_OVERHEAD_BYTES + 1);
    const error = refusal(() =>
      createPermissionBroker({ clock: systemClock, random: (n) => randomBytes(n), boundMs: 1000, baseDir: over }),
    );
    assert.equal(error.code, 'ask_host_socket_path_too_long');
    assert.deepEqual(readdirSync(over), []);
  });

  it('a listen that fails (no file descriptor left) is refused with its code, and its private directory removed', async () => {
    const base = mkdtempSync(join(root, 'emfile-'));
    // In a process of its own: every descriptor it may open is taken, then a broker is made.
    const script = `
      import { closeSync, openSync, readdirSync } from 'node:fs';
      import { createPermissionBroker } from ${JSON.stringify(new URL('../../lib/permission/broker.ts', import.meta.url).href)};
      const clock = { now: Date.now, wallNow: Date.now, setTimeout: (f, ms) => { const t = setTimeout(f, ms); return () => clearTimeout(t); } };
      const taken = [];
      try { for (;;) taken.push(openSync('/dev/null', 'r')); } catch (e) { if (e.code !== 'EMFILE') throw e; }
      let outcome;
      try {
        createPermissionBroker({ clock, random: (n) => new Uint8Array(n), boundMs: 1000, baseDir: ${JSON.stringify(base)} });
        outcome = { code: null };
      } catch (e) {
        outcome = { code: e.code, message: e.message };
      }
      for (const fd of taken) closeSync(fd);
      process.stdout.write(JSON.stringify({ ...outcome, taken: taken.length, left: readdirSync(${JSON.stringify(base)}) }) + '\\n');
      process.exit(0);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
    });
    const [code] = await once(child, 'exit');
    assert.equal(code, 0);
    const report = JSON.parse(out) as { code: string | null; taken: number; left: string[] };
    assert.ok(report.taken > 0);
    assert.equal(report.code, 'ask_host_listen_failed');
    assert.deepEqual(report.left, [], 'the private directory was removed');
  });
});
