// The server options table (lib/cli/server-options.ts) against every place that restates it: manifest.json's
// user_config and argument template, server.json's packageArguments, the CLI help, the README's option table
// and docs/library.md's. Each check returns the drift as JSON paths (or the doc row), empty when they agree; the
// checks are shown to fail on the drift they exist for. Also the one validator, through both faces.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseServeArgs, SERVE_USAGE } from '../../lib/cli/args.ts';
import {
  checkLibraryOptions,
  checkServerOptions,
  OPTION_KEYS,
  SERVER_OPTIONS,
  toUserConfigKey,
  type OptionKey,
  type OptionRule,
  type ServerOption,
} from '../../lib/cli/server-options.ts';
import { createClaudeRunAdapter } from '../../lib/library.ts';
import { ROOT } from '../../scripts/build.ts';
import { at, isJsonObject, objAt, parseObj } from '../helpers/typed-results.ts';
import type { JsonObject, JsonValue } from '../../lib/util/json.ts';

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const option = (key: OptionKey): ServerOption => SERVER_OPTIONS[key];
const published = OPTION_KEYS.filter((key) => option(key).published);
const libraryKeys = OPTION_KEYS.filter((key) => option(key).library);
const flagKey = (flag: string): OptionKey | undefined => OPTION_KEYS.find((key) => option(key).flag === flag);
const same = (a: JsonValue | undefined, b: JsonValue | undefined): boolean => JSON.stringify(a) === JSON.stringify(b);
const flagWithValue = (key: OptionKey): string => {
  const { flag, valueName } = option(key);
  return valueName === null ? flag : `${flag} ${valueName}`;
};

/** A number rule's bounds as the bundle states them: dollars start at 0, which means no budget. */
function bounds(rule: OptionRule): { min?: number; max?: number } {
  if (rule.kind === 'integer') return { min: rule.min, max: rule.max };
  if (rule.kind === 'dollars') return { min: 0, max: rule.max };
  return {};
}

/** The default a text form states: the switch's, the number's, the choice's; dollars' none is 0; a path has none. */
function textDefault(rule: OptionRule): string | undefined {
  switch (rule.kind) {
    case 'path':
      return undefined;
    case 'dollars':
      return '0';
    default:
      return String(rule.default);
  }
}

const MANIFEST_TYPES = { path: 'file', integer: 'number', switch: 'boolean', choice: 'string', dollars: 'number' } as const;
const REGISTRY_FORMATS = { path: 'filepath', integer: 'number', switch: 'boolean', choice: 'string', dollars: 'number' } as const;

/** manifest.json: user_config holds exactly the published options, and the argument template passes each one. */
function checkManifest(manifest: JsonObject): string[] {
  const problems: string[] = [];
  const config = isJsonObject(manifest['user_config']) ? manifest['user_config'] : {};
  const expectedKeys = published.map(toUserConfigKey);
  for (const name of Object.keys(config))
    if (!expectedKeys.includes(name)) problems.push(`/user_config/${name}: not a published server option`);
  for (const key of published) {
    const name = toUserConfigKey(key);
    const path = `/user_config/${name}`;
    const field = config[name];
    if (!isJsonObject(field)) {
      problems.push(`${path}: missing`);
      continue;
    }
    const { rule, bundleDefault, bundleRequired } = option(key);
    if (field['type'] !== MANIFEST_TYPES[rule.kind]) problems.push(`${path}/type: must be ${MANIFEST_TYPES[rule.kind]}`);
    const wanted: JsonValue | undefined = bundleDefault ?? (rule.kind === 'path' ? undefined : rule.kind === 'dollars' ? 0 : rule.default);
    if (!same(field['default'], wanted)) problems.push(`${path}/default: must be ${JSON.stringify(wanted)}`);
    const { min, max } = bounds(rule);
    if (!same(field['min'], min)) problems.push(`${path}/min: must be ${JSON.stringify(min)}`);
    if (!same(field['max'], max)) problems.push(`${path}/max: must be ${JSON.stringify(max)}`);
    if ((field['required'] === true) !== (bundleRequired === true)) problems.push(`${path}/required: must be ${bundleRequired === true}`);
  }
  const args = at(manifest, 'server', 'mcp_config', 'args');
  const template = published.map((key) => `${option(key).flag}=\${user_config.${toUserConfigKey(key)}}`);
  if (!Array.isArray(args) || !same(args.slice(1), template))
    problems.push(`/server/mcp_config/args: must be the entry, then ${template.join(' ')}`);
  return problems;
}

/** server.json: packageArguments are exactly the published flags, with the server's own defaults. */
function checkServerJson(doc: JsonObject): string[] {
  const problems: string[] = [];
  const args = at(doc, 'packages', 0, 'packageArguments');
  const list = Array.isArray(args) ? args : [];
  list.forEach((arg, i) => {
    const path = `/packages/0/packageArguments/${i}`;
    const key = isJsonObject(arg) ? flagKey(String(arg['name'])) : undefined;
    if (!isJsonObject(arg) || key === undefined || !option(key).published) {
      problems.push(`${path}/name: not a published server option`);
      return;
    }
    const { rule } = option(key);
    if (published.indexOf(key) !== i) problems.push(`${path}: out of the table's order`);
    if (arg['format'] !== REGISTRY_FORMATS[rule.kind]) problems.push(`${path}/format: must be ${REGISTRY_FORMATS[rule.kind]}`);
    if (!same(arg['default'], textDefault(rule))) problems.push(`${path}/default: must be ${JSON.stringify(textDefault(rule))}`);
    if (!same(arg['choices'], rule.kind === 'choice' ? [...rule.choices] : undefined)) problems.push(`${path}/choices: must be the rule's`);
    if (arg['isRequired'] === true) problems.push(`${path}/isRequired: the server starts without it`);
  });
  const names = list.map((arg) => (isJsonObject(arg) ? arg['name'] : undefined));
  for (const key of published)
    if (!names.includes(option(key).flag)) problems.push(`/packages/0/packageArguments: ${option(key).flag} missing`);
  return problems;
}

/** The words a rule's description must hold wherever it is restated: its range and its default. */
function ruleWords(rule: OptionRule): string[] {
  switch (rule.kind) {
    case 'path':
    case 'switch':
      return [];
    case 'integer':
      return [`${rule.min} to ${rule.max}`, `default ${rule.default}`];
    case 'choice':
      return [...rule.choices];
    case 'dollars':
      return [String(rule.max)];
  }
}

/** The help of serve: a line per option with its value name, its rule's words, and no flag the table does not know. */
function checkHelp(usage: string): string[] {
  const problems: string[] = [];
  const section = usage.slice(usage.indexOf('serve options:'));
  for (const key of OPTION_KEYS) {
    const start = section.indexOf(`\n  ${flagWithValue(key)} `);
    if (start === -1) {
      problems.push(`help: no line for ${flagWithValue(key)}`);
      continue;
    }
    const next = section.slice(start + 1).search(/\n {2}-/);
    const text = section.slice(start, next === -1 ? undefined : start + 1 + next);
    for (const word of ruleWords(option(key).rule))
      if (!text.includes(word)) problems.push(`help: ${option(key).flag} does not say ${word}`);
  }
  for (const [flag] of section.matchAll(/(?<=^ {2})--[a-z-]+/gm))
    if (flagKey(flag) === undefined && flag !== '--help') problems.push(`help: ${flag} is not a server option`);
  return problems;
}

/** The README's option table: a row per option, none for a flag the table does not know, each with its rule's words. */
function checkReadme(readme: string): string[] {
  const problems: string[] = [];
  const section = readme.slice(readme.indexOf('\n## Options\n'), readme.indexOf('\n## ', readme.indexOf('\n## Options\n') + 1));
  const rows = section.split('\n').filter((line) => line.startsWith('| `-'));
  for (const row of rows) {
    const flag = /^\| `(--[a-z-]+)/.exec(row)?.[1] ?? '';
    if (flagKey(flag) === undefined) problems.push(`README: ${flag} is not a server option`);
  }
  for (const key of OPTION_KEYS) {
    const row = rows.find((line) => line.startsWith(`| \`${flagWithValue(key)}\` |`));
    if (row === undefined) {
      problems.push(`README: no row for ${flagWithValue(key)}`);
      continue;
    }
    for (const word of ruleWords(option(key).rule))
      if (!row.includes(word)) problems.push(`README: ${option(key).flag} does not say ${word}`);
  }
  return problems;
}

/** docs/library.md's option table: a row per library option naming its flag, and no server flag for another key. */
function checkLibraryDoc(doc: string): string[] {
  const problems: string[] = [];
  const rows = doc.split('\n').filter((line) => /^\| `[a-zA-Z]+` \|/.test(line));
  for (const row of rows) {
    const [, name, rest] = /^\| `([a-zA-Z]+)` \|(.*)$/.exec(row) ?? [];
    const flag = /`(--[a-z-]+)`/.exec(rest ?? '')?.[1];
    if (flag === undefined) continue;
    const key = flagKey(flag);
    if (key === undefined || key !== name || !option(key).library)
      problems.push(`docs/library.md: ${name} is not the library key of ${flag}`);
  }
  for (const key of libraryKeys) {
    const row = rows.find((line) => line.startsWith(`| \`${key}\` |`));
    if (row === undefined || !row.includes(`\`${option(key).flag}\``)) {
      problems.push(`docs/library.md: no row for ${key} with ${option(key).flag}`);
      continue;
    }
    for (const word of ruleWords(option(key).rule))
      if (!row.includes(word.replace(/^default /, ''))) problems.push(`docs/library.md: ${key} does not say ${word}`);
  }
  return problems;
}

const manifest = parseObj(read('manifest.json'), 'manifest.json');
const serverJson = parseObj(read('server.json'), 'server.json');

describe('the server options table against what restates it', () => {
  it('manifest.json, server.json, the help, the README and docs/library.md agree with it', () => {
    assert.deepEqual(checkManifest(manifest), []);
    assert.deepEqual(checkServerJson(serverJson), []);
    assert.deepEqual(checkHelp(SERVE_USAGE), []);
    assert.deepEqual(checkReadme(read('README.md')), []);
    assert.deepEqual(checkLibraryDoc(read('docs/library.md')), []);
  });

  it('each check fails on the drift it exists for', () => {
    const changed = (doc: JsonObject, change: (copy: JsonObject) => void): JsonObject => {
      const copy = structuredClone(doc);
      change(copy);
      return copy;
    };
    const config = (copy: JsonObject): JsonObject => objAt(copy, 'user_config');
    const registryArgs = (copy: JsonObject): JsonValue[] => {
      const args = at(copy, 'packages', 0, 'packageArguments');
      assert.ok(Array.isArray(args));
      return args;
    };

    assert.deepEqual(
      checkManifest(
        changed(manifest, (c) => {
          objAt(config(c), 'max_timeout_seconds')['default'] = 600;
        }),
      ),
      ['/user_config/max_timeout_seconds/default: must be 1800'],
    );
    assert.deepEqual(
      checkManifest(
        changed(manifest, (c) => {
          objAt(config(c), 'budget_usd')['max'] = 10;
        }),
      ),
      ['/user_config/budget_usd/max: must be 1000000'],
    );
    assert.deepEqual(
      checkManifest(
        changed(manifest, (c) => {
          config(c)['max_frame_bytes'] = { type: 'number', title: 't', description: 'd' };
        }),
      ),
      ['/user_config/max_frame_bytes: not a published server option'],
    );
    assert.match(
      checkManifest(
        changed(manifest, (c) => {
          const args = at(c, 'server', 'mcp_config', 'args');
          assert.ok(Array.isArray(args));
          args.pop();
        }),
      ).join('\n'),
      /^\/server\/mcp_config\/args: /,
    );

    assert.deepEqual(
      checkServerJson(
        changed(serverJson, (c) => {
          registryArgs(c).push({ type: 'named', name: '--verbose', description: 'd' });
        }),
      ),
      [`/packages/0/packageArguments/${published.length}/name: not a published server option`],
    );
    assert.deepEqual(
      checkServerJson(
        changed(serverJson, (c) => {
          const arg = registryArgs(c)[1];
          assert.ok(isJsonObject(arg));
          arg['default'] = '900';
        }),
      ),
      ['/packages/0/packageArguments/1/default: must be "1800"'],
    );
    assert.deepEqual(
      checkServerJson(
        changed(serverJson, (c) => {
          registryArgs(c).splice(published.length - 1, 1);
        }),
      ),
      ['/packages/0/packageArguments: --budget-usd missing'],
    );

    assert.deepEqual(checkHelp(SERVE_USAGE.replace('(default 1800)', '(default 600)')), [
      'help: --max-timeout-seconds does not say default 1800',
    ]);
    assert.deepEqual(checkHelp(SERVE_USAGE.replace('  -h, --help', '  --verbose\n  -h, --help')), [
      'help: --verbose is not a server option',
    ]);
    const readme = read('README.md');
    assert.deepEqual(checkReadme(readme.replace(/^\| `--cleanup-backend B` \|.*\n/m, '')), ['README: no row for --cleanup-backend B']);
    assert.deepEqual(checkReadme(readme.replace('| `--max-frame-bytes N` |', '| `--frame-bytes N` |')), [
      'README: --frame-bytes is not a server option',
      'README: no row for --max-frame-bytes N',
    ]);
    const library = read('docs/library.md');
    assert.deepEqual(checkLibraryDoc(library.replace('| `maxTimeoutSeconds` | 1800', '| `maxTimeoutSeconds` | 600')), [
      'docs/library.md: maxTimeoutSeconds does not say default 1800',
    ]);
    assert.deepEqual(checkLibraryDoc(library.replace('| `maxTimeoutSeconds` |', '| `maxTimeout` |')), [
      'docs/library.md: maxTimeout is not the library key of --max-timeout-seconds',
      'docs/library.md: no row for maxTimeoutSeconds with --max-timeout-seconds',
    ]);
  });
});

describe('the one validator', () => {
  it("nothing given: every default, the command line's and the library's alike", () => {
    const defaults = checkServerOptions({});
    assert.deepEqual(defaults, parseServeArgs([]));
    assert.deepEqual(checkLibraryOptions({}), defaults);
    assert.deepEqual(defaults, { kind: 'config', config: Object.fromEntries(OPTION_KEYS.map((key) => [key, option(key).rule.default])) });
  });

  /** Per kind: a valid value, its text on the command line, and values the rule refuses (as values and as text). */
  const samples: {
    readonly [K in OptionRule['kind']]: { ok: JsonValue; text: string; bad: readonly unknown[]; badText: readonly string[] };
  } = {
    path: { ok: '/opt/claude', text: '/opt/claude', bad: ['', 'a\0b', 3], badText: [''] },
    integer: { ok: 1024, text: '1024', bad: [0, 1.5, Number.NaN, '60', 2 ** 31], badText: ['0', '1.5', '-5', '1e3', String(2 ** 31)] },
    switch: { ok: true, text: 'true', bad: ['yes', 1], badText: ['yes', ''] },
    choice: { ok: 'process_scan', text: 'process_scan', bad: ['none', 0], badText: ['none', ''] },
    dollars: {
      ok: 2.5,
      text: '2.5',
      bad: [0, -1, 1_000_000.000001, 0.0000001, Number.POSITIVE_INFINITY, '2'],
      badText: ['-1', '1e3', '.5', '0.0000001', '1000001'],
    },
  };

  for (const key of OPTION_KEYS) {
    const { flag, rule } = option(key);
    const sample = samples[rule.kind];
    it(`${key} (${flag}, ${rule.kind}): one rule for the flag and the library key; errors name it by code and path, never by value`, () => {
      const viaFlag = parseServeArgs([`${flag}=${sample.text}`]);
      assert.equal(viaFlag.kind, 'config');
      if (viaFlag.kind === 'config') assert.equal(viaFlag.config[key], sample.ok);
      for (const bad of sample.badText) {
        const parsed = parseServeArgs([`${flag}=${bad}`]);
        assert.equal(parsed.kind, 'error', `${flag}=${bad}`);
        if (parsed.kind !== 'error') continue;
        assert.deepEqual([parsed.code, parsed.path], ['invalid_option_value', `/${key}`]);
        assert.ok(parsed.message.startsWith(`${flag} `), parsed.message);
        if (bad.length > 1) assert.ok(!parsed.message.includes(bad), `the message echoes ${bad}`);
      }
      for (const bad of sample.bad) {
        const checked = checkServerOptions({ [key]: bad });
        assert.equal(checked.kind, 'error', String(bad));
        if (checked.kind === 'error') assert.deepEqual([checked.problem.code, checked.problem.path], ['invalid_option_value', `/${key}`]);
      }
      if (!option(key).library) return;
      assert.equal(checkLibraryOptions({ [key]: sample.ok }).kind, 'config');
      for (const bad of sample.bad) {
        const checked = checkLibraryOptions({ [key]: bad });
        assert.equal(checked.kind, 'error', String(bad));
      }
    });
  }

  it('the library throws the problem as a RangeError (a number out of range) or a TypeError, with code and path', () => {
    const thrown = (
      options: object,
    ): { readonly error: Error; readonly code: unknown; readonly path: unknown; readonly message: string } => {
      try {
        createClaudeRunAdapter({ cwd: '/', env: {}, ...options });
      } catch (error) {
        assert.ok(error instanceof Error);
        return { error, code: Reflect.get(error, 'code'), path: Reflect.get(error, 'path'), message: error.message };
      }
      assert.fail(`accepted ${JSON.stringify(options)}`);
    };
    const budget = thrown({ budgetUsd: 0 });
    assert.ok(budget.error instanceof RangeError);
    assert.deepEqual(
      [budget.code, budget.path, budget.message],
      ['invalid_option_value', '/budgetUsd', 'budgetUsd must be a number over 0 and up to 1000000, with at most 6 decimals'],
    );
    const names = thrown({ underscoreNames: 'SECRET' });
    assert.ok(names.error instanceof TypeError);
    assert.deepEqual(
      [names.code, names.path, names.message],
      ['invalid_option_value', '/underscoreNames', 'underscoreNames must be true or false'],
    );
    assert.deepEqual([thrown({ cwd: 'relative' }).path, thrown({ claudeBin: '' }).path], ['/cwd', '/claudeBin']);
  });

  it('the library takes no transport option: maxFrameBytes is not read', () => {
    const options = { claudeBin: '/opt/claude', maxFrameBytes: 'SECRET' };
    assert.equal(checkLibraryOptions(options).kind, 'config');
  });
});
