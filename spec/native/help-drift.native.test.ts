import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareHelpWithTree, parseHelpOptions } from '../../lib/native/help-drift.ts';
import { getCheckReport, runCheck } from '../../lib/cli/check.ts';
import { cleanupBackendFor, describeCleanup } from '../../lib/supervisor/parent/cleanup-backend.ts';
import { queryOnce } from '../helpers/probe.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import { at, objs, parseObj, str } from '../helpers/typed-results.ts';

const FAKE = fileURLToPath(new URL('../../fixtures/fake-version/fake-claude-version.mjs', import.meta.url));
const REAL = fileURLToPath(new URL('../../node_modules/.bin/claude', import.meta.url));

const SMALL_HELP = `Usage: claude [options] [command] [prompt]

Options:
  --add-dir <directories...>            More directories
  --allowedTools, --allowed-tools <tools...>
      Comma or space-separated list of tool names to allow (e.g. "Bash(git *)
      Edit")
  -c, --continue                        Continue the most recent conversation
  -d, --debug [filter]                  Enable debug mode
  --permission-mode <mode>              Permission mode to use for the session
                                        (choices: "acceptEdits", "auto",
                                        "dontAsk", "plan")
  --prompt-suggestions [value]          Turn on suggestions (choices: "true",
                                        "false", preset: "true")

Commands:
  agents [options]                      Manage background agents
`;

describe('parseHelpOptions', () => {
  it('reads names, placeholders, variadic, choices and wrapped descriptions; stops at Commands', () => {
    assert.deepEqual(
      parseHelpOptions(SMALL_HELP).map((o) => [o.names, o.valueName, o.valueOptional, o.variadic, o.choices]),
      [
        [['--add-dir'], 'directories...', false, true, null],
        [['--allowedTools', '--allowed-tools'], 'tools...', false, true, null],
        [['-c', '--continue'], null, false, false, null],
        [['-d', '--debug'], 'filter', true, false, null],
        [['--permission-mode'], 'mode', false, false, ['acceptEdits', 'auto', 'dontAsk', 'plan']],
        [['--prompt-suggestions'], 'value', true, false, ['true', 'false']],
      ],
    );
    assert.equal(
      parseHelpOptions(SMALL_HELP)[1]?.description,
      'Comma or space-separated list of tool names to allow (e.g. "Bash(git *) Edit")',
    );
  });
  it('no Options section gives no options', () => assert.deepEqual(parseHelpOptions('Usage: x\n'), []));
});

describe('drift against the real pinned binary', () => {
  let home = '';
  let help = '';
  let dir = '';
  const realEnv = (): Record<string, string> => ({
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
  });
  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'claude-home-'));
    dir = mkdtempSync(join(tmpdir(), 'help-drift-'));
    const result = await queryOnce(REAL, ['--help'], realEnv());
    assert.ok(result.kind === 'exited' && result.code === 0);
    help = result.stdout;
  });
  after(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it('parses every option line of the real help', () => {
    const section = help.slice(help.indexOf('\nOptions:\n'), help.indexOf('\nCommands:\n'));
    const optionLines = section.split('\n').filter((line) => /^ {2}-/.test(line)).length;
    assert.ok(optionLines > 50);
    assert.equal(parseHelpOptions(help).length, optionLines);
  });

  it('shows no removed or changed declared option; undeclared ones are informational', () => {
    const report = compareHelpWithTree(parseHelpOptions(help), CLI_TREE);
    assert.deepEqual(report.removed, []);
    assert.deepEqual(report.changed, []);
    assert.equal(report.ok, true);
    assert.deepEqual(report.hidden_verified, ['--max-turns']);
    assert.deepEqual(report.hidden_now_listed, []);
    assert.ok(report.not_declared.includes('--dangerously-skip-permissions'));
    for (const option of CLI_TREE.options) assert.ok(!report.not_declared.includes(option.flag));
    for (const flag of ['--print', '--output-format', '--verbose', '--include-partial-messages', '--version', '--help'])
      assert.ok(!report.not_declared.includes(flag), flag);
  });

  const mutations: readonly [string, (h: string) => string, boolean, (r: ReturnType<typeof compareHelpWithTree>) => void][] = [
    [
      'a declared option disappears',
      (h) => h.replace(/^ {2}--effort .*\n(?: {20,}.*\n)*/m, ''),
      false,
      (r) => assert.deepEqual(r.removed, ['--effort']),
    ],
    [
      'a declared permission mode is no longer a choice',
      (h) => h.replace('"dontAsk", ', ''),
      false,
      (r) =>
        assert.deepEqual(
          r.changed.map((c) => [c.flag, c.what]),
          [['--permission-mode', 'choices']],
        ),
    ],
    [
      'an effort level is no longer named',
      (h) => h.replace('xhigh, ', ''),
      false,
      (r) =>
        assert.deepEqual(
          r.changed.map((c) => [c.flag, c.what]),
          [['--effort', 'choices']],
        ),
    ],
    [
      'a list option stops being variadic',
      (h) => h.replace('--add-dir <directories...>', '--add-dir <directory>   '),
      false,
      (r) =>
        assert.deepEqual(
          r.changed.map((c) => [c.flag, c.what]),
          [['--add-dir', 'variadic']],
        ),
    ],
    [
      'a switch starts taking a value',
      (h) => h.replace('  --fork-session          ', '  --fork-session <id>     '),
      false,
      (r) =>
        assert.deepEqual(
          r.changed.map((c) => [c.flag, c.what]),
          [['--fork-session', 'value']],
        ),
    ],
    [
      'an output mode is no longer a choice',
      (h) => h.replace(/(choices: "text", "json",\s+)"stream-json"\)/, '$1"jsonl")'),
      false,
      (r) =>
        assert.deepEqual(
          r.changed.map((c) => [c.flag, c.what, c.expected]),
          [['--output-format', 'choices', 'stream-json']],
        ),
    ],
    [
      'a print-mode flag disappears',
      (h) => h.replace(/^ {2}--include-partial-messages .*\n(?: {20,}.*\n)*/m, ''),
      false,
      (r) => assert.deepEqual(r.removed, ['--include-partial-messages']),
    ],
    [
      'a hidden verified option shows up in help',
      (h) => h.replace('  --mcp-config', '  --max-turns <turns>                   Stop after N turns\n  --mcp-config'),
      true,
      (r) => {
        assert.deepEqual(r.hidden_now_listed, ['--max-turns']);
      },
    ],
    [
      'a new native option is informational only',
      (h) => h.replace('  --mcp-config', '  --shiny <x>                           New\n  --mcp-config'),
      true,
      (r) => {
        assert.ok(r.not_declared.includes('--shiny'));
      },
    ],
  ];
  for (const [name, mutate, ok, expect] of mutations) {
    it(`detects: ${name}`, () => {
      const mutated = mutate(help);
      assert.notEqual(mutated, help, 'the mutation applied');
      const report = compareHelpWithTree(parseHelpOptions(mutated), CLI_TREE);
      assert.equal(report.ok, ok);
      expect(report);
    });
  }

  it('runCheck: exit 0 and a passing JSON report for the real binary', async () => {
    let out = '';
    const code = await runCheck({
      cliFlag: REAL,
      env: realEnv(),
      write: (text) => {
        out += text;
      },
      timeoutMs: 30_000,
    });
    const report = parseObj(out, 'the check report');
    assert.equal(code, 0);
    assert.equal(report['ok'], true);
    assert.equal(report['binary'], REAL);
    assert.deepEqual(report['version'], { ok: true, version: CLI_TREE.native.tested_version });
    assert.deepEqual(at(report, 'help', 'removed'), []);
    assert.match(str(report['note'], 'note'), /nothing about authentication/);
  });

  it('runCheck: a drifted, mismatched fake fails with both verdicts', async () => {
    const helpFile = join(dir, 'help.txt');
    writeFileSync(helpFile, help.replace('"dontAsk", ', ''));
    const env = {
      PATH: process.env['PATH'] ?? '',
      FAKE_VERSION_MODE: 'help',
      FAKE_HELP_FILE: helpFile,
      FAKE_VERSION_TEXT: '2.1.400 (Claude Code)\n',
    };
    let out = '';
    const code = await runCheck({
      env: { ...env, CLAUDE_BIN: FAKE },
      write: (text) => {
        out += text;
      },
    });
    assert.equal(code, 1);
    const report = parseObj(out, 'the check report');
    assert.equal(report['ok'], false);
    assert.equal(at(report, 'version', 'error', 'code'), 'native_version_mismatch');
    assert.deepEqual(
      objs(at(report, 'help', 'changed'), 'help.changed').map((c) => c['flag']),
      ['--permission-mode'],
    );
  });

  const helpFailures: readonly [string, Record<string, string>, RegExp][] = [
    ['--help exits non-zero', { FAKE_HELP_FILE: '/nonexistent/help.txt' }, /--help exited with code 1/],
    ['--help lists no options', { FAKE_HELP_FILE: '/dev/null' }, /--help listed no options/],
  ];
  for (const [name, vars, error] of helpFailures) {
    it(`runCheck: ${name} fails the check even when the version matches`, async () => {
      const report = await getCheckReport({
        cliFlag: FAKE,
        env: { PATH: process.env['PATH'] ?? '', FAKE_VERSION_MODE: 'help', ...vars },
        write: () => {},
      });
      assert.equal(report.ok, false);
      assert.ok(report.version.ok);
      assert.ok(report.help !== null && 'error' in report.help);
      assert.match(report.help.error, error);
      // The check's two queries ran under a supervisor, proven as every run here is: the report names how.
      assert.equal(report.cleanup_confirmed, true);
      assert.deepEqual(report.cleanup, describeCleanup(cleanupBackendFor('auto')));
    });
  }

  it('runCheck: a missing binary reports native_not_found and exit 1', async () => {
    const report = await getCheckReport({ env: { PATH: dir }, write: () => {} });
    assert.equal(report.ok, false);
    assert.equal(report.binary, null);
    assert.ok(!report.version.ok && report.version.error.code === 'native_not_found');
    assert.equal(await runCheck({ env: { PATH: dir }, write: () => {} }), 1);
  });
});
