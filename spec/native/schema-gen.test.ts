import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildNativeArgv } from '../../lib/native/argv.ts';
import { getNativeOptionSchemas } from '../../lib/native/schema-gen.ts';
import { CLI_TREE } from '../../lib/native/tree.ts';
import { validate } from '../../lib/schema/validate.ts';
import { isToolError } from '../../lib/tool-errors.ts';
import type { JsonSchema } from '../../lib/contracts/providers.ts';
import type { JsonValue } from '../../lib/util/json.ts';
import type { PermissionMode } from '../../lib/runs/types.ts';

const schemas = getNativeOptionSchemas(CLI_TREE);
const objectSchema: JsonSchema = { type: 'object', properties: schemas, additionalProperties: false };
const { max_string_chars: maxChars, max_list_items: maxItems, max_list_item_chars: maxItemChars } = CLI_TREE.limits;

/** Values probing every kind's edges; each is tried against every option. */
const PROBES: readonly JsonValue[] = [
  true,
  false,
  null,
  0,
  1,
  -1,
  1.5,
  1e-7,
  25,
  1e21,
  '',
  'x',
  '-x',
  '--help',
  'a\0b',
  'opus',
  'Bash(git status:*)',
  '/tmp/dir',
  '0a1b2c3d-0000-4000-8000-00000000000a',
  'F47AC10B-58CC-4372-A567-0E02B2C3D479',
  '0a1b2c3d00004000800000000000000a',
  'low',
  'medium',
  'high',
  'xhigh',
  'max',
  'HIGH',
  'dontAsk',
  'plan',
  'acceptEdits',
  'bypassPermissions',
  'auto',
  'default',
  'x'.repeat(maxChars),
  'x'.repeat(maxChars + 1),
  '😀'.repeat(maxChars),
  '😀'.repeat(maxChars + 1),
  [],
  ['Read'],
  ['Read', 'Bash(git *)'],
  [''],
  ['-x'],
  ['a\0'],
  ['Read', 1],
  [null],
  [['Read']],
  Array.from({ length: maxItems }, (_, i) => `T${i}`),
  Array.from({ length: maxItems + 1 }, (_, i) => `T${i}`),
  ['x'.repeat(maxItemChars)],
  ['x'.repeat(maxItemChars + 1)],
  {},
  { a: 1 },
];

type Verdict = { ok: true } | { ok: false; path: string };

function viaBuilder(arg: string, value: JsonValue): Verdict {
  try {
    if (arg === 'permission_mode') {
      // A cast on purpose: any value the schema is given, valid or not, must get the builder's own verdict.
      buildNativeArgv({
        tree: CLI_TREE,
        outputMode: 'stream-json',
        permissionMode: value as PermissionMode,
        options: {},
        prompt: 'p',
      });
    } else {
      buildNativeArgv({
        tree: CLI_TREE,
        outputMode: 'stream-json',
        permissionMode: 'dontAsk',
        options: { [arg]: value },
        prompt: 'p',
      });
    }
    return { ok: true };
  } catch (error) {
    if (!isToolError(error) || error.code !== 'invalid_arguments' || error.path === undefined) throw error;
    return { ok: false, path: error.path };
  }
}

function viaSchema(arg: string, value: JsonValue): Verdict {
  const result = validate(objectSchema, { [arg]: value });
  return result.ok ? { ok: true } : { ok: false, path: result.path };
}

describe('generated schema and argv builder agree', () => {
  it('one property per declared option, in tree order', () => {
    assert.deepEqual(
      Object.keys(schemas),
      CLI_TREE.options.map((o) => o.arg),
    );
  });

  for (const option of CLI_TREE.options) {
    it(`${option.arg}: every probe gets the same verdict and path from both`, () => {
      let accepted = 0;
      for (const probe of PROBES) {
        const label = `${option.arg} = ${JSON.stringify(probe).slice(0, 60)}`;
        assert.deepEqual(viaBuilder(option.arg, probe), viaSchema(option.arg, probe), label);
        if (viaSchema(option.arg, probe).ok) accepted++;
      }
      assert.ok(accepted > 0, 'some probe is accepted');
      assert.ok(accepted < PROBES.length, 'some probe is rejected');
    });
  }

  it('an undeclared property is refused by both, at the same path', () => {
    assert.deepEqual(viaSchema('fallback_model', 'x'), { ok: false, path: '/fallback_model' });
    assert.deepEqual(viaBuilder('fallback_model', 'x'), { ok: false, path: '/fallback_model' });
  });
});

describe('generated schema shapes', () => {
  const cases: readonly [string, JsonSchema][] = [
    [
      'effort',
      {
        type: 'string',
        description: 'Effort level for the session; omitted means the native default.',
        enum: ['low', 'medium', 'high', 'xhigh', 'max'],
      },
    ],
    [
      'permission_mode',
      {
        type: 'string',
        description: 'Native permission mode. Bypass modes are not reachable through this adapter.',
        enum: ['dontAsk', 'plan', 'acceptEdits'],
      },
    ],
    [
      'max_budget_usd',
      {
        type: 'number',
        description: 'Maximum dollar amount the native run may spend on API calls (checked after each call).',
        exclusiveMinimum: 0,
      },
    ],
    [
      'max_turns',
      { type: 'integer', description: 'Stop the native run after this many turns.', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    ],
    [
      'continue_previous',
      {
        type: 'boolean',
        description: 'Continue the most recent native conversation of the working directory (starts a new one when there is none).',
      },
    ],
  ];
  for (const [arg, expected] of cases) it(arg, () => assert.deepEqual(schemas[arg], expected));

  it('uuid options carry format and pattern; lists carry item bounds', () => {
    assert.equal(schemas['session_id']?.format, 'uuid');
    assert.equal(typeof schemas['resume_session_id']?.pattern, 'string');
    assert.equal(schemas['allowed_tools']?.type, 'array');
    assert.equal(schemas['allowed_tools']?.maxItems, maxItems);
    assert.equal(schemas['allowed_tools']?.items?.maxLength, maxItemChars);
  });
});
