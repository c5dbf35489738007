import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CLI_TREE, getNativeArgNames, parseCliTree, validateCliTree } from '../../lib/native/tree.ts';
import { PERMISSION_MODES } from '../../lib/runs/types.ts';
import { at, parseObj } from '../helpers/typed-results.ts';
import type { JsonObject } from '../../lib/util/json.ts';

const ROOT = new URL('../../', import.meta.url);
const raw = (): JsonObject => parseObj(readFileSync(new URL('cli-tree.json', ROOT), 'utf8'), 'cli-tree.json');
// Mutations reach into parsed JSON freely; the validator under test is what types it.
type Mutate = (tree: any) => void;

describe('cli-tree.json', () => {
  it('is valid and equals what the module loaded', () => {
    assert.deepEqual(validateCliTree(raw()), []);
    assert.deepEqual(CLI_TREE, raw());
  });

  it('pins the exact devDependency version of the native package', () => {
    const pkg = parseObj(readFileSync(new URL('package.json', ROOT), 'utf8'), 'package.json');
    assert.equal(at(pkg, 'devDependencies', CLI_TREE.native.package), CLI_TREE.native.tested_version);
    assert.equal(CLI_TREE.native.tested_version, '2.1.332');
  });

  it('declares at least the required options, with their MCP argument and value kind', () => {
    const expected: readonly [string, string, string][] = [
      ['--model', 'model', 'string'],
      ['--effort', 'effort', 'enum'],
      ['--append-system-prompt', 'append_system_prompt', 'string'],
      ['--max-budget-usd', 'max_budget_usd', 'number'],
      ['--max-turns', 'max_turns', 'integer'],
      ['--permission-mode', 'permission_mode', 'enum'],
      ['--session-id', 'session_id', 'uuid'],
      ['--resume', 'resume_session_id', 'uuid'],
      ['--continue', 'continue_previous', 'none'],
      ['--fork-session', 'fork_session', 'none'],
      ['--no-session-persistence', 'no_session_persistence', 'none'],
      ['--worktree', 'worktree', 'string'],
      ['--allowedTools', 'allowed_tools', 'list'],
      ['--disallowedTools', 'disallowed_tools', 'list'],
      ['--add-dir', 'add_dirs', 'list'],
      ['--json-schema', 'output_schema', 'json_schema'],
    ];
    assert.deepEqual(
      CLI_TREE.options.map((o) => [o.flag, o.arg, o.value]),
      expected,
    );
  });

  it('declares exactly the three non-bypass permission modes and the native effort levels', () => {
    const mode = CLI_TREE.options.find((o) => o.arg === 'permission_mode');
    assert.ok(mode?.value === 'enum');
    assert.deepEqual([...mode.choices].sort(), [...PERMISSION_MODES].sort());
    const effort = CLI_TREE.options.find((o) => o.arg === 'effort');
    assert.ok(effort?.value === 'enum');
    assert.deepEqual(effort.choices, ['low', 'medium', 'high', 'xhigh', 'max']);
  });

  it('getNativeArgNames lists every declared argument', () => {
    assert.deepEqual(
      [...getNativeArgNames(CLI_TREE)],
      CLI_TREE.options.map((o) => o.arg),
    );
    assert.ok(getNativeArgNames(CLI_TREE).has('permission_mode'));
  });

  it('records --max-turns as verified-hidden, every other option as read from help', () => {
    for (const option of CLI_TREE.options)
      assert.equal(option.source, option.flag === '--max-turns' ? 'verified-hidden' : 'help', option.flag);
  });

  it('records the verified 2.1.332 behaviour of --json-schema: structured_output, absent without a valid call, bad schemas refused', () => {
    const option = CLI_TREE.options.find((o) => o.flag === '--json-schema');
    assert.match(String(option?.verified), /structured_output = the object/);
    assert.match(String(option?.verified), /structured_output absent/);
    assert.match(String(option?.verified), /refused before any API call/);
  });

  it('declares the stdin channel as verified: input format, stdio prompt tool, every control message', () => {
    const declared = CLI_TREE.stdin_channel;
    assert.deepEqual(CLI_TREE.input['stream-json'].args, ['--input-format', 'stream-json'], 'the channel is on in every stream-json run');
    assert.deepEqual(declared.permission_prompt_tool, ['--permission-prompt-tool', 'stdio']);
    assert.deepEqual(Object.keys(declared.native_writes), ['can_use_tool', 'interrupt_ack']);
    assert.deepEqual(Object.keys(declared.native_reads), ['user', 'allow', 'deny', 'error', 'interrupt']);
    assert.match(declared.verified, /^2\.1\.332: .*spec\/native\/control\.native\.test\.ts/);
  });

  it('declares the fixed flags of both output modes', () => {
    assert.deepEqual(CLI_TREE.print_mode, ['-p']);
    assert.deepEqual(CLI_TREE.output_modes, {
      'json': ['--output-format', 'json'],
      'stream-json': ['--output-format', 'stream-json', '--verbose', '--include-partial-messages'],
    });
  });

  const mutations: readonly [string, Mutate, RegExp][] = [
    [
      'wrong format_version',
      (t) => {
        t.format_version = 2;
      },
      /format_version/,
    ],
    [
      'unknown top-level key',
      (t) => {
        t.extra = 1;
      },
      /unknown key "extra"/,
    ],
    [
      'no stdin channel',
      (t) => {
        delete t.stdin_channel;
      },
      /stdin_channel: must be an object/,
    ],
    [
      'stdin channel prompt tool value that is a flag',
      (t) => {
        t.stdin_channel.permission_prompt_tool = ['--permission-prompt-tool', '--x'];
      },
      /stdin_channel\.permission_prompt_tool: must be a long flag and its value/,
    ],
    [
      'stdin channel without the deny message',
      (t) => {
        delete t.stdin_channel.native_reads.deny;
      },
      /stdin_channel\.native_reads\.deny: must be an object with a constant type/,
    ],
    [
      'stdin channel with an undeclared message',
      (t) => {
        t.stdin_channel.native_writes.cancel = { type: 'control_cancel_request' };
      },
      /stdin_channel\.native_writes: unknown key "cancel"/,
    ],
    [
      'stdin channel message whose type is a placeholder',
      (t) => {
        t.stdin_channel.native_writes.can_use_tool.type = '<string:type>';
      },
      /native_writes\.can_use_tool: must be an object with a constant type/,
    ],
    [
      'stdin channel malformed placeholder',
      (t) => {
        t.stdin_channel.native_reads.allow.response.response.updatedInput = '<input>';
      },
      /native_reads\.allow\.response\.response\.updatedInput: "<input>" is not a placeholder/,
    ],
    [
      'stdin channel without its verification note',
      (t) => {
        t.stdin_channel.verified = '';
      },
      /stdin_channel\.verified: must be a non-empty string/,
    ],
    [
      'unknown stdin channel key',
      (t) => {
        t.stdin_channel.timeout_ms = 1;
      },
      /stdin_channel: unknown key "timeout_ms"/,
    ],
    [
      'bad tested_version',
      (t) => {
        t.native.tested_version = 'latest';
      },
      /tested_version/,
    ],
    [
      'pattern without capture of the version',
      (t) => {
        t.native.version_output_pattern = '^\\d+';
      },
      /version_output_pattern/,
    ],
    [
      'pattern not a regexp',
      (t) => {
        t.native.version_output_pattern = '(';
      },
      /version_output_pattern/,
    ],
    [
      'a user line with json output (the native refuses stream-json input without stream-json output)',
      (t) => {
        t.input.json.prompt = 'user_line';
      },
      /input\.json\.prompt: user_line needs stream-json output/,
    ],
    [
      'an unknown prompt delivery',
      (t) => {
        t.input['stream-json'].prompt = 'argv';
      },
      /input\.stream-json\.prompt: must be one of/,
    ],
    [
      'input args that are not flags',
      (t) => {
        t.input['stream-json'].args = ['stream-json'];
      },
      /input\.stream-json\.args: must be flags/,
    ],
    [
      'an input entry missing for an output mode',
      (t) => {
        delete t.input.json;
      },
      /input\.json: not an object/,
    ],
    [
      'string limit that could overflow one argv element',
      (t) => {
        t.limits.max_string_chars = 32768;
      },
      /max_string_chars/,
    ],
    [
      'missing output mode',
      (t) => {
        delete t.output_modes.json;
      },
      /output_modes\.json/,
    ],
    [
      'duplicate flag',
      (t) => {
        t.options[1].flag = '--model';
      },
      /declared twice/,
    ],
    [
      'duplicate arg',
      (t) => {
        t.options[1].arg = 'model';
      },
      /declared twice/,
    ],
    [
      'option flag colliding with an output-mode flag',
      (t) => {
        t.options[0].flag = '--verbose';
      },
      /declared twice/,
    ],
    [
      'short flag',
      (t) => {
        t.options[0].flag = '-m';
      },
      /long flag/,
    ],
    [
      'unknown value kind',
      (t) => {
        t.options[0].value = 'path';
      },
      /unknown kind/,
    ],
    [
      'enum without choices',
      (t) => {
        delete t.options[1].choices;
      },
      /choices/,
    ],
    [
      'choices on a string option',
      (t) => {
        t.options[0].choices = ['a'];
      },
      /only enum/,
    ],
    [
      'bound on a string option',
      (t) => {
        t.options[0].minimum = 1;
      },
      /only numeric/,
    ],
    [
      'list that is not repeatable',
      (t) => {
        t.options.find((o: { arg: string }) => o.arg === 'allowed_tools').repeatable = false;
      },
      /repeatable/,
    ],
    [
      'pattern on a non-string option',
      (t) => {
        t.options[4].pattern = '^a$';
      },
      /only string options have a pattern/,
    ],
    [
      'pattern that is not a regular expression',
      (t) => {
        t.options[0].pattern = '^(a$';
      },
      /not a regular expression/,
    ],
    [
      'pattern that admits a leading dash',
      (t) => {
        t.options[0].pattern = '^[-a-z]+$';
      },
      /leading '-'/,
    ],
    [
      'pattern that is not anchored',
      (t) => {
        t.options[0].pattern = '[a-z]';
      },
      /anchored/,
    ],
    [
      'multi-line description',
      (t) => {
        t.options[0].description = 'a\nb';
      },
      /one line/,
    ],
    [
      'verified-hidden without a note',
      (t) => {
        delete t.options[4].verified;
      },
      /verified/,
    ],
    [
      'an empty verified note',
      (t) => {
        t.options[0].verified = '';
      },
      /verified/,
    ],
    [
      'bypass mode reachable',
      (t) => {
        t.options[5].choices.push('bypassPermissions');
      },
      /permission_mode/,
    ],
    [
      'unknown option key',
      (t) => {
        t.options[0].default = 'opus';
      },
      /unknown key "default"/,
    ],
  ];
  for (const [name, mutate, problem] of mutations) {
    it(`rejects: ${name}`, () => {
      const tree = raw();
      mutate(tree);
      const problems = validateCliTree(tree);
      assert.ok(
        problems.some((p) => problem.test(p)),
        problems.join('; ') || 'no problem reported',
      );
      assert.throws(() => parseCliTree(tree), /invalid cli-tree\.json/);
    });
  }
});
