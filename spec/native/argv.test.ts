import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildNativeArgv } from '../../lib/native/argv.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import { isToolError } from '../../lib/tool-errors.ts';
import { MAX_SCHEMA_DEPTH } from '../../lib/native/json-schema-check.ts';
import type { NativeArgv, NativeArgvInput } from '../../lib/native/argv.ts';
import { MAX_USER_LINE_BYTES, userMessageLine } from '../../lib/native/argv.ts';
import { CONTROL_LINE_MAX_BYTES } from '../../lib/supervisor/protocol.ts';
import type { JsonValue } from '../../lib/util/json.ts';
import type { PermissionMode } from '../../lib/runs/types.ts';
import { parseObj } from '../helpers/typed-results.ts';

const U1 = '0a1b2c3d-0000-4000-8000-00000000000a';
const U2 = 'F47AC10B-58CC-4372-A567-0E02B2C3D479';
const JSON_HEAD = ['-p', '--output-format', 'json'];
/** Options the tree orders before --permission-mode. */
const BEFORE_PERMISSION_MODE = new Set(['model', 'effort', 'append_system_prompt', 'max_budget_usd', 'max_turns']);
const STREAM_HEAD = ['-p', '--output-format', 'stream-json', '--verbose', '--include-partial-messages'];

function build(over: Partial<NativeArgvInput> = {}): NativeArgv {
  return buildNativeArgv({
    tree: CLI_TREE,
    outputMode: 'json',
    permissionMode: 'dontAsk',
    options: {},
    prompt: 'hello',
    ...over,
  });
}

function rejects(over: Partial<NativeArgvInput>, path: string): void {
  assert.throws(
    () => build(over),
    (error: unknown) => {
      assert.ok(isToolError(error), 'a ToolError');
      assert.equal(error.code, 'invalid_arguments');
      assert.equal(error.path, path);
      return true;
    },
  );
}

describe('buildNativeArgv: exact argv', () => {
  it('minimal json run: print mode, output flags, permission mode; the prompt as text on stdin', () => {
    assert.deepEqual(build(), { args: [...JSON_HEAD, '--permission-mode', 'dontAsk'], stdin: 'hello', streamInput: false });
  });

  it('minimal stream-json run carries --verbose --include-partial-messages and reads a user line on stdin', () => {
    assert.deepEqual(build({ outputMode: 'stream-json', permissionMode: 'plan' }), {
      args: [...STREAM_HEAD, '--input-format', 'stream-json', '--permission-mode', 'plan'],
      stdin: '{"type":"user","message":{"role":"user","content":"hello"}}\n',
      streamInput: true,
    });
  });

  const perOption: readonly [string, JsonValue, readonly string[]][] = [
    ['model', 'opus', ['--model', 'opus']],
    ['model', 'claude-opus-5-5', ['--model', 'claude-opus-5-5']],
    ['effort', 'low', ['--effort', 'low']],
    ['effort', 'medium', ['--effort', 'medium']],
    ['effort', 'high', ['--effort', 'high']],
    ['effort', 'xhigh', ['--effort', 'xhigh']],
    ['effort', 'max', ['--effort', 'max']],
    ['append_system_prompt', 'Answer in French.\nBe terse.', ['--append-system-prompt', 'Answer in French.\nBe terse.']],
    ['max_budget_usd', 0.5, ['--max-budget-usd', '0.5']],
    ['max_budget_usd', 2, ['--max-budget-usd', '2']],
    ['max_budget_usd', 1e-7, ['--max-budget-usd', '1e-7']],
    ['max_turns', 1, ['--max-turns', '1']],
    ['max_turns', 25, ['--max-turns', '25']],
    ['max_turns', Number.MAX_SAFE_INTEGER, ['--max-turns', '9007199254740991']],
    ['session_id', U1, ['--session-id', U1]],
    ['session_id', U2, ['--session-id', U2]],
    ['resume_session_id', U1, ['--resume', U1]],
    ['continue_previous', true, ['--continue']],
    ['continue_previous', false, []],
    ['fork_session', true, ['--fork-session']],
    ['fork_session', false, []],
    ['no_session_persistence', true, ['--no-session-persistence']],
    ['no_session_persistence', false, []],
    ['worktree', 'fix-42', ['--worktree', 'fix-42']],
    ['worktree', 'A_b-9', ['--worktree', 'A_b-9']],
    ['allowed_tools', ['Read'], ['--allowedTools', 'Read']],
    ['allowed_tools', ['Read', 'Bash(git status:*)'], ['--allowedTools', 'Read', '--allowedTools', 'Bash(git status:*)']],
    ['allowed_tools', [], []],
    ['disallowed_tools', ['WebFetch', 'Bash(rm:*)'], ['--disallowedTools', 'WebFetch', '--disallowedTools', 'Bash(rm:*)']],
    ['add_dirs', ['/tmp/a', 'relative dir'], ['--add-dir', '/tmp/a', '--add-dir', 'relative dir']],
    [
      'output_schema',
      { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
      ['--json-schema', '{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}'],
    ],
    [
      'output_schema',
      { type: ['string', 'null'], description: '-leading dash is data, not a flag' },
      ['--json-schema', '{"type":["string","null"],"description":"-leading dash is data, not a flag"}'],
    ],
    ['permission_mode', 'dontAsk', []], // equal to permissionMode: accepted, emitted once at its tree position
  ];
  for (const [arg, value, tokens] of perOption) {
    it(`${arg} = ${JSON.stringify(value)}`, () => {
      const expected = BEFORE_PERMISSION_MODE.has(arg)
        ? [...JSON_HEAD, ...tokens, '--permission-mode', 'dontAsk']
        : [...JSON_HEAD, '--permission-mode', 'dontAsk', ...tokens];
      assert.deepEqual(build({ options: { [arg]: value } }).args, expected);
    });
  }

  it('every declared option has an exact-argv case above', () => {
    const covered = new Set(perOption.map(([arg]) => arg));
    assert.deepEqual(
      CLI_TREE.options.map((o) => o.arg).filter((arg) => !covered.has(arg)),
      [],
    );
  });

  it('all options at once come out in tree order, whatever the key order', () => {
    const options: Record<string, JsonValue> = {
      add_dirs: ['/tmp/a', '/tmp/b'],
      disallowed_tools: ['WebFetch'],
      allowed_tools: ['Read', 'Bash(git status:*)'],
      worktree: 'w1',
      no_session_persistence: true,
      fork_session: true,
      continue_previous: true,
      resume_session_id: U2,
      session_id: U1,
      max_turns: 3,
      max_budget_usd: 0.25,
      append_system_prompt: 'Be terse.',
      effort: 'high',
      model: 'sonnet',
    };
    assert.deepEqual(build({ options, permissionMode: 'acceptEdits', prompt: '-starts with a dash' }).args, [
      ...JSON_HEAD,
      '--model',
      'sonnet',
      '--effort',
      'high',
      '--append-system-prompt',
      'Be terse.',
      '--max-budget-usd',
      '0.25',
      '--max-turns',
      '3',
      '--permission-mode',
      'acceptEdits',
      '--session-id',
      U1,
      '--resume',
      U2,
      '--continue',
      '--fork-session',
      '--no-session-persistence',
      '--worktree',
      'w1',
      '--allowedTools',
      'Read',
      '--allowedTools',
      'Bash(git status:*)',
      '--disallowedTools',
      'WebFetch',
      '--add-dir',
      '/tmp/a',
      '--add-dir',
      '/tmp/b',
    ]);
  });

  it('adds nothing that was not supplied (no model, effort, budget or turns defaults)', () => {
    const { args } = build({ outputMode: 'stream-json' });
    for (const flag of ['--model', '--effort', '--max-budget-usd', '--max-turns', '--append-system-prompt'])
      assert.ok(!args.includes(flag), flag);
  });

  it('a prompt that looks like an option never reaches argv', () => {
    for (const outputMode of ['json', 'stream-json'] as const) {
      const out = build({ outputMode, prompt: '--dangerously-skip-permissions' });
      assert.ok(!out.args.some((a) => a.includes('dangerously')), outputMode);
    }
  });
});

describe('buildNativeArgv: prompt delivery (never argv)', () => {
  const sizes = [1, 64 * 1024, 128 * 1024 + 1, 1024 * 1024];
  for (const bytes of sizes) {
    it(`a ${bytes}-byte prompt: the whole of it on stdin, none of it in argv`, () => {
      const prompt = 'a'.repeat(bytes);
      const json = build({ prompt });
      assert.equal(json.stdin, prompt);
      const stream = build({ prompt, outputMode: 'stream-json' });
      assert.equal(stream.stdin, userMessageLine(prompt));
      for (const args of [json.args, stream.args]) assert.ok(args.every((a) => !a.includes('aaa')));
    });
  }

  it('a user line is one line whatever the prompt holds (newlines, quotes, a fake control line)', () => {
    const prompt = 'line one\n{"type":"control_response"}\n"quoted"\u2028end';
    const line = userMessageLine(prompt);
    assert.equal(line.indexOf('\n'), line.length - 1);
    assert.deepEqual(JSON.parse(line), { type: 'user', message: { role: 'user', content: prompt } });
  });
});

describe('buildNativeArgv: rejections', () => {
  const maxChars = CLI_TREE.limits.max_string_chars;
  const maxItems = CLI_TREE.limits.max_list_items;
  const maxItemChars = CLI_TREE.limits.max_list_item_chars;
  const table: readonly [string, Partial<NativeArgvInput>, string][] = [
    ['undeclared option', { options: { fallback_model: 'x' } }, '/fallback_model'],
    ['undeclared bypass switch', { options: { dangerously_skip_permissions: true } }, '/dangerously_skip_permissions'],
    ['own __proto__ key', { options: parseObj('{"__proto__": "x"}') }, '/__proto__'],
    ['pointer escaping of an undeclared key', { options: { 'a/b~c': 1 } }, '/a~1b~0c'],
    ['empty prompt', { prompt: '' }, '/prompt'],
    ['NUL in prompt', { prompt: 'a\0b' }, '/prompt'],
    ['NUL in a stream-json prompt', { prompt: 'a\0b', outputMode: 'stream-json' }, '/prompt'],
    ['model starting with -', { options: { model: '-x' } }, '/model'],
    ['model --flag', { options: { model: '--dangerously-skip-permissions' } }, '/model'],
    ['empty model', { options: { model: '' } }, '/model'],
    ['NUL in model', { options: { model: 'op\0us' } }, '/model'],
    ['model number', { options: { model: 42 } }, '/model'],
    ['model null', { options: { model: null } }, '/model'],
    ['model array', { options: { model: ['opus'] } }, '/model'],
    ['append_system_prompt one past max chars', { options: { append_system_prompt: 'x'.repeat(maxChars + 1) } }, '/append_system_prompt'],
    [
      'append_system_prompt one past max code points (astral)',
      { options: { append_system_prompt: '😀'.repeat(maxChars + 1) } },
      '/append_system_prompt',
    ],
    ['append_system_prompt starting with -', { options: { append_system_prompt: '- bullet' } }, '/append_system_prompt'],
    ['effort not a choice', { options: { effort: 'bogus' } }, '/effort'],
    ['effort wrong case', { options: { effort: 'HIGH' } }, '/effort'],
    ['effort number', { options: { effort: 1 } }, '/effort'],
    ['budget zero', { options: { max_budget_usd: 0 } }, '/max_budget_usd'],
    ['budget negative', { options: { max_budget_usd: -1 } }, '/max_budget_usd'],
    ['budget string', { options: { max_budget_usd: '1' } }, '/max_budget_usd'],
    ['budget boolean', { options: { max_budget_usd: true } }, '/max_budget_usd'],
    ['max_turns zero', { options: { max_turns: 0 } }, '/max_turns'],
    ['max_turns fraction', { options: { max_turns: 1.5 } }, '/max_turns'],
    ['max_turns negative', { options: { max_turns: -1 } }, '/max_turns'],
    ['max_turns string', { options: { max_turns: '3' } }, '/max_turns'],
    ['max_turns 1e21 (String() would write an exponent)', { options: { max_turns: 1e21 } }, '/max_turns'],
    ['max_turns one past the safe integers', { options: { max_turns: Number.MAX_SAFE_INTEGER + 1 } }, '/max_turns'],
    // Casts here on purpose: modes outside the type, sent to prove the builder refuses them at runtime.
    ['permission mode outside the declared three', { permissionMode: 'bypassPermissions' as PermissionMode }, '/permission_mode'],
    ['permission mode auto', { permissionMode: 'auto' as PermissionMode }, '/permission_mode'],
    ['permission_mode option disagreeing', { options: { permission_mode: 'plan' } }, '/permission_mode'],
    ['session_id not a uuid', { options: { session_id: 'not-a-uuid' } }, '/session_id'],
    ['session_id without hyphens', { options: { session_id: '0a1b2c3d00004000800000000000000a' } }, '/session_id'],
    ['session_id braced', { options: { session_id: `{${U1}}` } }, '/session_id'],
    ['session_id with trailing newline', { options: { session_id: `${U1}\n` } }, '/session_id'],
    ['resume id not a uuid (titles are not accepted)', { options: { resume_session_id: 'my session' } }, '/resume_session_id'],
    ['resume id number', { options: { resume_session_id: 1 } }, '/resume_session_id'],
    ['continue_previous string', { options: { continue_previous: 'true' } }, '/continue_previous'],
    ['fork_session number', { options: { fork_session: 1 } }, '/fork_session'],
    ['no_session_persistence null', { options: { no_session_persistence: null } }, '/no_session_persistence'],
    ['worktree with a slash (a path, not a name)', { options: { worktree: 'a/b' } }, '/worktree'],
    ['worktree with dots (could climb out of .claude/worktrees)', { options: { worktree: '..' } }, '/worktree'],
    ['worktree starting with -', { options: { worktree: '-b' } }, '/worktree'],
    ['worktree one char too long', { options: { worktree: 'a'.repeat(65) } }, '/worktree'],
    ['worktree true (a name is required)', { options: { worktree: true } }, '/worktree'],
    ['allowed_tools not an array', { options: { allowed_tools: 'Read' } }, '/allowed_tools'],
    ['allowed_tools empty item', { options: { allowed_tools: [''] } }, '/allowed_tools/0'],
    ['allowed_tools item starting with -', { options: { allowed_tools: ['Read', '-x'] } }, '/allowed_tools/1'],
    ['allowed_tools item with NUL', { options: { allowed_tools: ['Re\0ad'] } }, '/allowed_tools/0'],
    ['allowed_tools non-string item', { options: { allowed_tools: ['Read', 1] } }, '/allowed_tools/1'],
    [
      'allowed_tools one item too many',
      { options: { allowed_tools: Array.from({ length: maxItems + 1 }, (_, i) => `T${i}`) } },
      '/allowed_tools',
    ],
    ['allowed_tools item one char too long', { options: { allowed_tools: ['x'.repeat(maxItemChars + 1)] } }, '/allowed_tools/0'],
    ['disallowed_tools item --flag', { options: { disallowed_tools: ['--help'] } }, '/disallowed_tools/0'],
    ['add_dirs item starting with -', { options: { add_dirs: ['/ok', '-evil'] } }, '/add_dirs/1'],
    ['add_dirs object', { options: { add_dirs: { a: '/x' } } }, '/add_dirs'],
    // output_schema: the structural rules the pinned CLI's meta-schema check enforces (exit 1 natively).
    ['output_schema an array', { options: { output_schema: [1, 2] } }, '/output_schema'],
    ['output_schema a string', { options: { output_schema: 'x' } }, '/output_schema'],
    ['output_schema unknown type name', { options: { output_schema: { type: 'nonsense' } } }, '/output_schema/type'],
    ['output_schema empty type list', { options: { output_schema: { type: [] } } }, '/output_schema/type'],
    [
      'output_schema properties not an object',
      { options: { output_schema: { type: 'object', properties: 5 } } },
      '/output_schema/properties',
    ],
    [
      'output_schema bad nested type',
      { options: { output_schema: { properties: { 'a/b': { items: { type: 'int' } } } } } },
      '/output_schema/properties/a~1b/items/type',
    ],
    ['output_schema required not strings', { options: { output_schema: { required: ['a', 1] } } }, '/output_schema/required'],
    ['output_schema required repeated', { options: { output_schema: { required: ['a', 'a'] } } }, '/output_schema/required'],
    ['output_schema anyOf empty', { options: { output_schema: { anyOf: [] } } }, '/output_schema/anyOf'],
    ['output_schema anyOf member not a schema', { options: { output_schema: { anyOf: [{}, 3] } } }, '/output_schema/anyOf/1'],
    ['output_schema minLength negative', { options: { output_schema: { minLength: -1 } } }, '/output_schema/minLength'],
    ['output_schema invalid pattern', { options: { output_schema: { pattern: '(' } } }, '/output_schema/pattern'],
    [
      'output_schema too deep',
      { options: { output_schema: nest(MAX_SCHEMA_DEPTH + 2) } },
      `/output_schema${'/not'.repeat(MAX_SCHEMA_DEPTH + 1)}`,
    ],
    [
      'output_schema one character too long serialized',
      { options: { output_schema: { description: 'x'.repeat(maxChars - '{"description":""}'.length + 1) } } },
      '/output_schema',
    ],
  ];
  for (const [name, over, path] of table) it(`${name} -> ${path}`, () => rejects(over, path));

  it('accepts an output_schema exactly at the serialized bound and at the depth bound', () => {
    const atBound = { description: 'x'.repeat(maxChars - '{"description":""}'.length) };
    assert.equal(JSON.stringify(atBound).length, maxChars);
    assert.ok(build({ options: { output_schema: atBound } }).args.includes(JSON.stringify(atBound)));
    assert.ok(build({ options: { output_schema: nest(MAX_SCHEMA_DEPTH + 1) } }).args.includes('--json-schema'));
  });

  it('output_schema errors name the keyword, never the submitted value', () => {
    try {
      build({ options: { output_schema: { type: 'secret-type-name' } } });
      assert.fail('expected a rejection');
    } catch (error) {
      assert.ok(isToolError(error));
      assert.equal(error.path, '/output_schema/type');
      assert.ok(!error.message.includes('secret'));
    }
  });

  it('accepts values exactly at each bound', () => {
    const { args } = build({
      options: {
        append_system_prompt: '😀'.repeat(maxChars),
        allowed_tools: Array.from({ length: maxItems }, () => 'x'.repeat(maxItemChars)),
      },
    });
    assert.equal(args.filter((a) => a === '--allowedTools').length, maxItems);
    assert.ok(args.includes('😀'.repeat(maxChars)));
  });

  it('error messages never echo the rejected value', () => {
    try {
      build({ options: { model: '-secret-value' } });
      assert.fail('expected a rejection');
    } catch (error) {
      assert.ok(isToolError(error));
      assert.ok(!error.message.includes('secret'));
    }
  });
});

/** A schema nested `levels` deep through `not` (the root is level 1). */
function nest(levels: number): JsonValue {
  let schema: JsonValue = {};
  for (let i = 1; i < levels; i++) schema = { not: schema };
  return schema;
}

describe('buildNativeArgv: the user line bound', () => {
  it(`a prompt whose user line is exactly MAX_USER_LINE_BYTES is taken; one byte more is invalid_arguments at /prompt`, () => {
    const overhead = Buffer.byteLength(userMessageLine(''), 'utf8');
    const atBound = 'a'.repeat(MAX_USER_LINE_BYTES - overhead);
    assert.equal(Buffer.byteLength(build({ prompt: atBound, outputMode: 'stream-json' }).stdin, 'utf8'), MAX_USER_LINE_BYTES);
    // A quote encodes to two bytes: one fewer character, one byte over.
    rejects({ prompt: `${'a'.repeat(MAX_USER_LINE_BYTES - overhead - 1)}"`, outputMode: 'stream-json' }, '/prompt');
  });

  it('twice encoded (inside the supervisor spawn line), the largest user line stays under CONTROL_LINE_MAX_BYTES', () => {
    const worst = userMessageLine('"'.repeat((MAX_USER_LINE_BYTES - 64) / 2));
    assert.ok(Buffer.byteLength(worst, 'utf8') <= MAX_USER_LINE_BYTES);
    assert.ok(Buffer.byteLength(JSON.stringify({ stdin: worst }), 'utf8') < CONTROL_LINE_MAX_BYTES);
  });
});
