// server.json for the official MCP Registry, checked against the rules of its published schema
// (https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json, ServerDetail and Package
// definitions) as restated here: the schema itself is not vendored and the specs run without network.
// Beyond the schema: the npm ownership link (package.json mcpName) and that every declared argument,
// rendered as the registry says (`--flag=value`), is accepted by the server's own parser (the drift of each
// argument from the options table is spec/cli/server-options.test.ts's).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseServeArgs } from '../../lib/cli/args.ts';
import { OPTION_KEYS, SERVER_OPTIONS } from '../../lib/cli/server-options.ts';
import { ROOT } from '../../scripts/build.ts';
import { at, isJsonObject, objAt, objs, parseObj, str } from '../helpers/typed-results.ts';
import type { JsonObject } from '../../lib/util/json.ts';

type Json = Record<string, unknown>;
const SCHEMA_URL = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';
const NAME_PATTERN = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;
/** Version ranges the schema rejects ('^1.2.3', '~1.2.3', '>=1.2.3', '1.x', '1.*'), and 'latest'. */
const VERSION_RANGE = /[\^~<>=*\s|]|(^|\.)x(\.|$)/;
const SERVER_KEYS = [
  '$schema',
  '_meta',
  'description',
  'icons',
  'name',
  'packages',
  'remotes',
  'repository',
  'title',
  'version',
  'websiteUrl',
];
const PACKAGE_KEYS = [
  'environmentVariables',
  'fileSha256',
  'identifier',
  'packageArguments',
  'registryBaseUrl',
  'registryType',
  'runtimeArguments',
  'runtimeHint',
  'transport',
  'version',
];
const INPUT_KEYS = [
  'choices',
  'default',
  'description',
  'format',
  'isRequired',
  'isSecret',
  'placeholder',
  'value',
  'variables',
  'type',
  'name',
  'isRepeated',
  'valueHint',
];
const FORMATS = ['string', 'number', 'boolean', 'filepath'];

const text = (value: unknown, min: number, max: number): boolean => typeof value === 'string' && value.length >= min && value.length <= max;

/** Every rule this spec holds server.json to; returns the violations (JSON paths), empty when valid. */
function checkServerJson(doc: Json, pkg: Json): string[] {
  const problems: string[] = [];
  const fail = (path: string, what: string): void => {
    problems.push(`${path}: ${what}`);
  };
  for (const key of Object.keys(doc)) if (!SERVER_KEYS.includes(key)) fail(`/${key}`, 'not a ServerDetail property');
  if (doc['$schema'] !== SCHEMA_URL) fail('/$schema', `must be ${SCHEMA_URL}`);
  if (!text(doc['name'], 3, 200) || !NAME_PATTERN.test(String(doc['name'])))
    fail('/name', 'reverse-DNS namespace/name, 3 to 200 characters');
  if (doc['name'] !== pkg['mcpName']) fail('/name', 'must equal package.json mcpName (npm ownership verification)');
  if (!text(doc['description'], 1, 100)) fail('/description', '1 to 100 characters');
  if (doc['title'] !== undefined && !text(doc['title'], 1, 100)) fail('/title', '1 to 100 characters');
  if (!text(doc['version'], 1, 255) || VERSION_RANGE.test(String(doc['version'])) || doc['version'] === 'latest')
    fail('/version', 'a specific version, no range');
  if (doc['version'] !== pkg['version']) fail('/version', 'must equal package.json version');
  const packages = doc['packages'];
  if (!Array.isArray(packages) || packages.length !== 1) return [...problems, '/packages: exactly one package'];
  const p: unknown = packages[0];
  if (!isJsonObject(p)) return [...problems, '/packages/0: an object'];
  for (const key of Object.keys(p)) if (!PACKAGE_KEYS.includes(key)) fail(`/packages/0/${key}`, 'not a Package property');
  if (p['registryType'] !== 'npm') fail('/packages/0/registryType', 'npm');
  if (p['registryBaseUrl'] !== 'https://registry.npmjs.org') fail('/packages/0/registryBaseUrl', 'the npm public registry');
  if (p['identifier'] !== pkg['name']) fail('/packages/0/identifier', 'must equal package.json name');
  if (p['version'] !== pkg['version'] || p['version'] === 'latest') fail('/packages/0/version', 'must equal package.json version');
  if (JSON.stringify(p['transport']) !== JSON.stringify({ type: 'stdio' })) fail('/packages/0/transport', 'stdio');
  if (p['runtimeHint'] !== 'npx') fail('/packages/0/runtimeHint', 'npx');
  const args = p['packageArguments'];
  if (!Array.isArray(args)) return [...problems, '/packages/0/packageArguments: an array'];
  args.forEach((arg, i) => {
    const at = `/packages/0/packageArguments/${i}`;
    if (!isJsonObject(arg)) {
      fail(at, 'an Argument object');
      return;
    }
    for (const key of Object.keys(arg)) if (!INPUT_KEYS.includes(key)) fail(`${at}/${key}`, 'not an Argument property');
    if (arg['type'] !== 'named' || typeof arg['name'] !== 'string' || !arg['name'].startsWith('--'))
      fail(at, 'a named argument with its dashes');
    if (arg['format'] !== undefined && !FORMATS.includes(String(arg['format']))) fail(`${at}/format`, FORMATS.join(', '));
    if (!text(arg['description'], 1, Number.MAX_SAFE_INTEGER)) fail(`${at}/description`, 'a description');
    for (const key of ['isRequired', 'isSecret', 'isRepeated'])
      if (arg[key] !== undefined && typeof arg[key] !== 'boolean') fail(`${at}/${key}`, 'boolean');
    if (arg['default'] !== undefined && typeof arg['default'] !== 'string') fail(`${at}/default`, 'string');
  });
  return problems;
}

const doc = parseObj(readFileSync(join(ROOT, 'server.json'), 'utf8'), 'server.json');
const pkg = parseObj(readFileSync(join(ROOT, 'package.json'), 'utf8'), 'package.json');

describe('server.json (MCP Registry)', () => {
  it('follows the registry schema rules, the npm package and its ownership link', () => {
    assert.deepEqual(checkServerJson(doc, pkg), []);
  });

  it('the checks fail what the registry rejects', () => {
    const broken = (change: (copy: JsonObject, firstPackage: JsonObject) => void): string[] => {
      const copy = structuredClone(doc);
      change(copy, objAt(copy, 'packages', 0));
      return checkServerJson(copy, pkg);
    };
    assert.match(
      broken((c) => {
        c['name'] = 'no-slash';
      }).join('\n'),
      /^\/name: reverse-DNS/m,
    );
    assert.match(
      broken((c) => {
        c['description'] = 'x'.repeat(101);
      }).join('\n'),
      /^\/description/m,
    );
    assert.match(
      broken((_c, p) => {
        p['version'] = 'latest';
      }).join('\n'),
      /^\/packages\/0\/version/m,
    );
    assert.match(
      broken((c) => {
        c['version'] = '^0.1.0';
      }).join('\n'),
      /^\/version: a specific version/m,
    );
    assert.match(
      broken((_c, p) => {
        p['transport'] = { type: 'sse' };
      }).join('\n'),
      /^\/packages\/0\/transport/m,
    );
    assert.match(
      broken((_c, p) => {
        p['command'] = 'npx';
      }).join('\n'),
      /^\/packages\/0\/command: not a Package property/m,
    );
  });

  it('every argument, rendered --flag=value, is accepted by the server; together they cover its user options', () => {
    const sample: Record<string, string> = { filepath: '/usr/local/bin/claude', number: '60', boolean: 'true', string: 'x' };
    const args = objs(at(doc, 'packages', 0, 'packageArguments'), 'packageArguments').map((a, i) => {
      const what = `packageArguments[${i}]`;
      const name = str(a['name'], `${what}.name`);
      const value =
        a['default'] === undefined
          ? sample[a['format'] === undefined ? 'string' : str(a['format'], `${what}.format`)]
          : str(a['default'], `${what}.default`);
      return { name, value: str(value, `${what}: a default or a sample value`) };
    });
    for (const { name, value } of args) {
      const parsed = parseServeArgs([`${name}=${value}`]);
      assert.equal(parsed.kind, 'config', `${name}=${value}`);
    }
    assert.deepEqual(
      args.map((a) => a.name),
      OPTION_KEYS.filter((key) => SERVER_OPTIONS[key].published).map((key) => SERVER_OPTIONS[key].flag),
    );
    const parsed = parseServeArgs(args.map((a) => `${a.name}=${a.value}`));
    assert.deepEqual(parsed, {
      kind: 'config',
      config: {
        claudeBin: '/usr/local/bin/claude',
        maxTimeoutSeconds: 1800,
        maxOpenIdleSeconds: 3600,
        underscoreNames: false,
        promptViaStdin: false,
        maxFrameBytes: 16 * 1024 * 1024,
        cleanupBackend: 'auto',
        budgetUsd: null,
        stateDir: null,
      },
    });
  });
});
