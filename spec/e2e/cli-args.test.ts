import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_FRAME_BYTES_LIMIT, MAX_TIMEOUT_SECONDS_LIMIT, MIN_FRAME_BYTES, parseServeArgs } from '../../lib/cli/args.ts';

const DEFAULTS = { claudeBin: null, maxTimeoutSeconds: 1800, underscoreNames: false, promptViaStdin: false, maxFrameBytes: 16 * 1024 * 1024 };

describe('parseServeArgs', () => {
  it('defaults', () => assert.deepEqual(parseServeArgs([]), { kind: 'config', config: DEFAULTS }));

  it('every option, spaced and with =', () => {
    assert.deepEqual(
      parseServeArgs(['--claude-bin', '/opt/claude', '--max-timeout-seconds=60', '--underscore-names', '--prompt-via-stdin', '--max-frame-bytes', '2048']),
      { kind: 'config', config: { claudeBin: '/opt/claude', maxTimeoutSeconds: 60, underscoreNames: true, promptViaStdin: true, maxFrameBytes: 2048 } },
    );
  });

  it('numeric bounds: exactly at each bound and one past', () => {
    const ok = (args: string[]): boolean => parseServeArgs(args).kind === 'config';
    assert.ok(ok(['--max-timeout-seconds', '1']));
    assert.ok(!ok(['--max-timeout-seconds', '0']));
    assert.ok(ok(['--max-timeout-seconds', String(MAX_TIMEOUT_SECONDS_LIMIT)]));
    assert.ok(!ok(['--max-timeout-seconds', String(MAX_TIMEOUT_SECONDS_LIMIT + 1)]));
    assert.ok(ok(['--max-frame-bytes', String(MIN_FRAME_BYTES)]));
    assert.ok(!ok(['--max-frame-bytes', String(MIN_FRAME_BYTES - 1)]));
    assert.ok(ok(['--max-frame-bytes', String(MAX_FRAME_BYTES_LIMIT)]));
    assert.ok(!ok(['--max-frame-bytes', String(MAX_FRAME_BYTES_LIMIT + 1)]));
  });

  const errors: [string[], RegExp][] = [
    [['--nope'], /unknown option: --nope/],
    [['positional'], /unknown command or argument: positional \(commands: serve, print, check\)/],
    [['--max-timeout-seconds'], /needs an integer/],
    [['--max-timeout-seconds', '1.5'], /needs an integer/],
    [['--max-timeout-seconds', '-5'], /needs an integer/],
    [['--max-timeout-seconds', '1e3'], /needs an integer/],
    [['--claude-bin'], /needs a path/],
    [['--claude-bin', '--underscore-names'], /needs a path/],
    [['--claude-bin='], /needs a path/],
    [['--underscore-names=yes'], /takes no value/],
    [[`--${'x'.repeat(500)}`], /unknown option: --x{62}…$/],
  ];
  for (const [args, pattern] of errors) {
    it(`rejects ${JSON.stringify(args).slice(0, 60)}`, () => {
      const parsed = parseServeArgs(args);
      assert.equal(parsed.kind, 'error');
      if (parsed.kind === 'error') assert.match(parsed.message, pattern);
    });
  }

  it('--help', () => assert.deepEqual(parseServeArgs(['--underscore-names', '--help']), { kind: 'help' }));
});
