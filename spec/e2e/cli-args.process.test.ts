import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { parseServeArgs } from '../../lib/cli/args.ts';
import { MAX_BUDGET_USD_LIMIT, MAX_FRAME_BYTES_LIMIT, MAX_TIMEOUT_SECONDS_LIMIT, MIN_FRAME_BYTES } from '../../lib/cli/server-options.ts';
import { parseCheckArgs } from '../../lib/cli/check.ts';
import { getPrintUsage, parsePrintArgs, toFlagMessage } from '../../lib/cli/print-args.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import { isToolError } from '../../lib/tool-errors.ts';
import { ADAPTER_VERSION } from '../../lib/version.ts';
import { DEADLINE_MS, MAIN, ROOT } from './server-process.ts';
import { parseObj, str } from '../helpers/typed-results.ts';

const DEFAULTS = {
  claudeBin: null,
  maxTimeoutSeconds: 1800,
  maxOpenIdleSeconds: 3600,
  underscoreNames: false,
  promptViaStdin: false,
  maxFrameBytes: 16 * 1024 * 1024,
  cleanupBackend: 'auto',
  budgetUsd: null,
  stateDir: null,
};

describe('parseServeArgs', () => {
  it('defaults', () => assert.deepEqual(parseServeArgs([]), { kind: 'config', config: DEFAULTS }));

  it('every option, spaced and with =', () => {
    assert.deepEqual(
      parseServeArgs([
        '--claude-bin',
        '/opt/claude',
        '--max-timeout-seconds=60',
        '--max-open-idle-seconds',
        '600',
        '--underscore-names',
        '--prompt-via-stdin',
        '--max-frame-bytes',
        '2048',
        '--state-dir=/var/lib/crm-state',
      ]),
      {
        kind: 'config',
        config: {
          ...DEFAULTS,
          claudeBin: '/opt/claude',
          maxTimeoutSeconds: 60,
          maxOpenIdleSeconds: 600,
          underscoreNames: true,
          promptViaStdin: true,
          maxFrameBytes: 2048,
          stateDir: '/var/lib/crm-state',
        },
      },
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
    assert.ok(ok(['--budget-usd', String(MAX_BUDGET_USD_LIMIT)]));
    assert.ok(!ok(['--budget-usd', String(MAX_BUDGET_USD_LIMIT + 1)]));
    assert.ok(!ok(['--budget-usd', `${MAX_BUDGET_USD_LIMIT}.000001`]));
  });

  it('--budget-usd: dollars with up to 6 decimals; 0 or empty (an unset MCP Bundle setting) means no budget', () => {
    const budget = (args: string[]): unknown => {
      const p = parseServeArgs(args);
      return p.kind === 'config' ? p.config.budgetUsd : p.kind;
    };
    assert.equal(budget(['--budget-usd', '2.5']), 2.5);
    assert.equal(budget(['--budget-usd=0.000001']), 0.000001);
    assert.equal(budget(['--budget-usd=0']), null);
    assert.equal(budget(['--budget-usd=']), null);
    assert.equal(budget(['--budget-usd', '3', '--budget-usd=0']), null, 'the last one wins');
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
    [['--underscore-names=yes'], /^--underscore-names takes no value \(or exactly =true, =false\)$/],
    [['--prompt-via-stdin='], /takes no value/],
    [['--budget-usd'], /^--budget-usd needs dollars from 0 to 1000000 with at most 6 decimals/],
    [['--budget-usd', '0.0000001'], /--budget-usd needs dollars/],
    [['--budget-usd', '-1'], /--budget-usd needs dollars/],
    [['--budget-usd', '1e3'], /--budget-usd needs dollars/],
    [['--budget-usd', '.5'], /--budget-usd needs dollars/],
    [[`--${'x'.repeat(500)}`], /unknown option: --x{62}…$/],
  ];
  for (const [args, pattern] of errors) {
    it(`rejects ${JSON.stringify(args).slice(0, 60)}`, () => {
      const parsed = parseServeArgs(args);
      assert.equal(parsed.kind, 'error');
      if (parsed.kind === 'error') assert.match(parsed.message, pattern);
    });
  }

  it('boolean flags take an explicit =true or =false (an MCP Bundle argument template sets them so)', () => {
    assert.deepEqual(parseServeArgs(['--underscore-names=true', '--prompt-via-stdin=false']), {
      kind: 'config',
      config: { ...DEFAULTS, underscoreNames: true },
    });
    assert.deepEqual(parseServeArgs(['--underscore-names', '--underscore-names=false', '--prompt-via-stdin=true']), {
      kind: 'config',
      config: { ...DEFAULTS, promptViaStdin: true },
    });
  });

  it('--help', () => assert.deepEqual(parseServeArgs(['--underscore-names', '--help']), { kind: 'help' }));
});

describe('parsePrintArgs', () => {
  const run = (argv: string[]) => parsePrintArgs(argv, CLI_TREE);
  const usageError = (argv: string[]): string => {
    try {
      run(argv);
    } catch (error) {
      assert.ok(isToolError(error));
      assert.equal(error.code, 'invalid_arguments');
      return error.message;
    }
    assert.fail(`accepted ${JSON.stringify(argv)}`);
  };

  it('native flags, own flags, inline values and the prompt after --', () => {
    assert.deepEqual(
      run([
        '--permission-mode=plan',
        '--model',
        'sonnet',
        '--allowedTools',
        'Read',
        '--allowedTools=Grep',
        '--continue',
        '--max-turns',
        '3',
        '--cwd',
        '/tmp',
        '--timeout-seconds=60',
        '--claude-bin',
        '/opt/claude',
        '--',
        '--model',
        'is',
        'prompt text',
      ]),
      {
        kind: 'run',
        claudeBin: '/opt/claude',
        args: {
          permission_mode: 'plan',
          model: 'sonnet',
          allowed_tools: ['Read', 'Grep'],
          continue_previous: true,
          max_turns: 3,
          cwd: '/tmp',
          timeout_seconds: 60,
          prompt: '--model is prompt text',
        },
      },
    );
  });

  it('--help and -h anywhere before --, but not inside the prompt', () => {
    assert.deepEqual(run(['--model', 'x', '--help']), { kind: 'help' });
    assert.deepEqual(run(['-h']), { kind: 'help' });
    assert.equal(run(['--permission-mode', 'plan', '--', '--help']).kind, 'run');
  });

  const cases: [string[], RegExp][] = [
    [['--permission-mode', 'plan', '--model', '--', 'x'], /^--model needs a value before the -- that starts the prompt$/],
    [['--permission-mode', 'plan', '--model', '--effort', 'high', '--', 'x'], /^--model needs a value before --effort$/],
    [['--permission-mode', 'plan', '--cwd'], /^--cwd needs a directory$/],
    [['--permission-mode', 'plan', '--model=', '--', 'x'], /^--model needs a value$/],
    [['--permission-mode', 'plan', '--continue=yes', '--', 'x'], /^--continue takes no value$/],
    [['--permission-mode', 'plan', '--timeout-seconds', 'soon', '--', 'x'], /^--timeout-seconds needs a number$/],
    [['--permission-mode', 'plan', '--resume', '--', 'x'], /^--resume needs a session UUID before the -- that starts the prompt$/],
    [['--permission-mode', '--', 'x'], /^--permission-mode needs one of dontAsk, plan, acceptEdits before the -- that starts the prompt$/],
    [['--permission-mode', 'plan', 'say hi'], /^the prompt goes after --: claude-run-mcp print \[options\] -- PROMPT$/],
    [['--permission-mode', 'plan', '--yolo', '--', 'x'], /^unknown option --yolo \(claude-run-mcp print --help lists the options\)$/],
    [['--permission-mode', 'plan', `--${'y'.repeat(300)}`, '--', 'x'], /^unknown option --y{62}… /],
    [['--', 'x'], /^--permission-mode is required for print \(no default here\): dontAsk, plan, acceptEdits$/],
    [['--permission-mode', 'plan'], /^a prompt is required after --/],
    [['--permission-mode', 'plan', '--'], /^a prompt is required after --/],
  ];
  for (const [argv, pattern] of cases) {
    it(`rejects ${JSON.stringify(argv).slice(0, 70)}`, () => assert.match(usageError(argv), pattern));
  }

  it('an error never echoes a submitted value', () => {
    assert.doesNotMatch(usageError(['--permission-mode', 'plan', 'SECRET-PROMPT']), /SECRET/);
    assert.doesNotMatch(usageError(['--permission-mode', 'plan', '--timeout-seconds', 'SECRET', '--', 'x']), /SECRET/);
  });

  it('the help lists every declared flag and the own ones', () => {
    const usage = getPrintUsage(CLI_TREE);
    for (const option of CLI_TREE.options) assert.ok(usage.includes(`  ${option.flag}`), option.flag);
    for (const flag of ['--cwd DIR', '--timeout-seconds N', '--claude-bin PATH', '-h, --help']) assert.ok(usage.includes(flag), flag);
  });
});

describe('toFlagMessage', () => {
  it('names flags instead of argument names and JSON paths', () => {
    assert.equal(toFlagMessage('must be at least 1', '/timeout_seconds', CLI_TREE), '--timeout-seconds: must be at least 1');
    assert.equal(toFlagMessage('must be an integer', '/max_turns', CLI_TREE), '--max-turns: must be an integer');
    assert.equal(toFlagMessage('must be a string', '/allowed_tools/0', CLI_TREE), '--allowedTools: must be a string');
    assert.equal(toFlagMessage('cwd must name an existing directory', '/cwd', CLI_TREE), '--cwd must name an existing directory');
    assert.equal(
      toFlagMessage('session_id, resume_session_id and continue_previous are mutually exclusive', '/continue_previous', CLI_TREE),
      '--session-id, --resume and --continue are mutually exclusive',
    );
    assert.equal(toFlagMessage('too long', '/prompt', CLI_TREE), 'the prompt after --: too long');
    assert.equal(toFlagMessage('odd', '/unknown_thing', CLI_TREE), 'odd');
  });
});

describe('parseCheckArgs', () => {
  it('binary, help and usage errors', () => {
    assert.deepEqual(parseCheckArgs([]), { kind: 'check', cliFlag: undefined });
    assert.deepEqual(parseCheckArgs(['--claude-bin', '/opt/claude']), { kind: 'check', cliFlag: '/opt/claude' });
    assert.deepEqual(parseCheckArgs(['--claude-bin=/opt/claude']), { kind: 'check', cliFlag: '/opt/claude' });
    assert.deepEqual(parseCheckArgs(['--claude-bin', '/x', '-h']), { kind: 'help' });
    assert.deepEqual(parseCheckArgs(['--claude-bin']), { kind: 'error', message: '--claude-bin needs a path to the Claude Code binary' });
    assert.deepEqual(parseCheckArgs(['--claude-bin', '--help']), {
      kind: 'error',
      message: '--claude-bin needs a path to the Claude Code binary',
    });
    assert.deepEqual(parseCheckArgs(['--json']), {
      kind: 'error',
      message: 'unknown option: --json (check takes --claude-bin PATH, --cleanup-backend B)',
    });
  });
});

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** lib/main.ts as a process; resolves when it exits (hard deadline). */
function main(args: string[]): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...MAIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`main ${args.join(' ')} did not exit within ${DEADLINE_MS} ms`));
    }, DEADLINE_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the command line as a process', () => {
  it('--help and -h: the commands and serve options on stdout, exit 0', async () => {
    for (const flag of ['--help', '-h', 'serve']) {
      const run = await main(flag === 'serve' ? ['serve', '--help'] : [flag]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, '');
      for (const word of [
        'claude-run-mcp [serve]',
        'claude-run-mcp print',
        'claude-run-mcp check',
        '--version',
        '--claude-bin PATH',
        '--max-timeout-seconds N',
        '--underscore-names',
        '--prompt-via-stdin',
        '--max-frame-bytes N',
      ]) {
        assert.ok(run.stdout.includes(word), `${flag}: ${word}`);
      }
    }
  });

  it('--version: the adapter version and the tested native version, exit 0', async () => {
    const run = await main(['--version']);
    assert.equal(run.code, 0);
    assert.equal(run.stdout, `claude-run-mcp ${ADAPTER_VERSION} (tested with Claude Code ${CLI_TREE.native.tested_version})\n`);
  });

  it('print --help and check --help on stdout, exit 0', async () => {
    const print = await main(['print', '--help']);
    assert.equal(print.code, 0, print.stderr);
    assert.equal(print.stdout, `${getPrintUsage(CLI_TREE)}\n`);
    const check = await main(['check', '-h']);
    assert.equal(check.code, 0, check.stderr);
    assert.match(check.stdout, /^usage: claude-run-mcp check \[--claude-bin PATH\]/);
  });

  it('usage errors exit 2 and name the flag; a well-formed request that fails exits 1', async () => {
    const usage: [string[], RegExp][] = [
      [['print', '--permission-mode', 'yolo', '--', 'x'], /^--permission-mode: must be one of/],
      [['print', '--permission-mode', 'dontAsk', '--timeout-seconds', '0', '--', 'x'], /^--timeout-seconds: must be at least 1$/],
      [['print', '--permission-mode', 'dontAsk', '--model', '--', 'x'], /^--model needs a value before the -- /],
      [['print', '--', 'x'], /^--permission-mode is required/],
    ];
    for (const [args, pattern] of usage) {
      const run = await main(args);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      const error = parseObj(run.stderr, 'the stderr error line');
      assert.equal(error['code'], 'invalid_arguments');
      assert.match(str(error['message'], 'message'), pattern);
      assert.equal(run.stdout, '');
    }
    const serve = await main(['--max-timeout-seconds', '0']);
    assert.equal(serve.code, 2);
    assert.match(serve.stderr, /--max-timeout-seconds needs an integer from 1 to 86400/);
    const check = await main(['check', '--claude-bin']);
    assert.equal(check.code, 2);
    assert.match(check.stderr, /--claude-bin needs a path/);
    const command = await main(['serv']);
    assert.equal(command.code, 2);
    assert.match(command.stderr, /unknown command: serv \(known: serve, print, check\)/);
    const missing = await main(['print', '--permission-mode', 'dontAsk', '--claude-bin', '/nonexistent/claude', '--', 'x']);
    assert.equal(missing.code, 1, missing.stderr);
    assert.equal(parseObj(missing.stderr, 'the stderr error line')['code'], 'native_not_found');
  });
});
