// The argv of a run: only an ask_host run gets the stdio prompt tool (and the native default mode when it
// chose none); any other run gets no prompt tool at all, so its permission_mode decides alone.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { attachAskHost } from '../../lib/permission/attach.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import type { PreparedRun } from '../../lib/runs/execute.ts';
import { systemClock } from '../../lib/util/clock.ts';

const deps = { clock: systemClock, random: (n: number) => randomBytes(n), promptTool: CLI_TREE.stdin_channel.permission_prompt_tool };
const ARGS = ['-p', '--output-format', 'stream-json', '--input-format', 'stream-json', '--permission-mode', 'dontAsk'];

function prepared(askHost: { timeoutMs: number; defaultMode: boolean } | null, mode = 'dontAsk'): PreparedRun {
  return {
    request: {
      prompt: 'x',
      cwd: '/',
      permissionMode: 'dontAsk',
      nativeOptions: {},
      session: { kind: 'fresh' },
      timeoutMs: 60_000,
      idleTimeoutMs: null,
      askHost,
    },
    bin: '/bin/true',
    argv: { args: ARGS.map((a) => (a === 'dontAsk' ? mode : a)), stdin: 'x\n', streamInput: true },
  };
}

describe('attachAskHost', () => {
  it('without ask_host: the same run, no prompt tool, no broker', () => {
    const run = prepared(null);
    const attached = attachAskHost(run, deps);
    assert.equal(attached.broker, null);
    assert.equal(attached.prepared, run);
    assert.equal(attached.prepared.argv.args.includes('--permission-prompt-tool'), false);
  });

  it('with ask_host and no mode chosen: the native default mode and --permission-prompt-tool stdio, a broker of its bound', () => {
    const attached = attachAskHost(prepared({ timeoutMs: 5_000, defaultMode: true }), deps);
    assert.deepEqual(attached.prepared.argv.args, [
      '-p',
      '--output-format',
      'stream-json',
      '--input-format',
      'stream-json',
      '--permission-mode',
      'default',
      '--permission-prompt-tool',
      'stdio',
    ]);
    assert.equal(attached.prepared.argv.stdin, 'x\n', 'the prompt stays on stdin');
    assert.equal(attached.broker?.boundMs, 5_000);
    assert.equal(attached.prepared.env, undefined, 'nothing in the environment');
    attached.broker?.close();
  });

  it('with ask_host and acceptEdits chosen: the mode stays', () => {
    const attached = attachAskHost(prepared({ timeoutMs: 5_000, defaultMode: false }, 'acceptEdits'), deps);
    assert.deepEqual(attached.prepared.argv.args.slice(-4), ['--permission-mode', 'acceptEdits', '--permission-prompt-tool', 'stdio']);
    attached.broker?.close();
  });
});
