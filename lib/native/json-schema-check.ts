/**
 * A structural check of a caller's JSON Schema before it becomes the native `--json-schema`. The pinned
 * CLI validates the schema against the JSON Schema meta-schema and refuses a bad one with exit 1 and no
 * result event (verified on 2.1.332, cli-tree.json); checking the same structural rules here turns that
 * into an input error with the JSON Pointer of the first bad keyword, before anything is spawned. The
 * message names the keyword and the rule, never the submitted value. Pure.
 */
import type { JsonValue } from '../util/json.ts';
import { escapePointerToken } from '../util/json-pointer.ts';

/** Nested schemas deeper than this are refused (a bound on the recursion, not a native rule). */
export const MAX_SCHEMA_DEPTH = 32;

const TYPE_NAMES: ReadonlySet<string> = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
const SCHEMA_KEYWORDS = [
  'additionalProperties',
  'items',
  'additionalItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
];
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas'];
const SCHEMA_LIST_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const COUNT_KEYWORDS = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'minContains', 'maxContains'];
const NUMBER_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];
const STRING_KEYWORDS = [
  '$id',
  '$schema',
  '$ref',
  '$comment',
  'title',
  'description',
  'pattern',
  'format',
  'contentEncoding',
  'contentMediaType',
];

export interface SchemaProblem {
  /** JSON Pointer inside the schema ('' is the schema itself). */
  readonly pointer: string;
  readonly message: string;
}

/** The first structural problem of a root schema (which must be an object), or null. */
export function findSchemaProblem(schema: JsonValue): SchemaProblem | null {
  if (!isObject(schema)) return { pointer: '', message: 'must be a JSON Schema object' };
  return check(schema, '', 0);
}

function check(schema: JsonValue, pointer: string, depth: number): SchemaProblem | null {
  if (typeof schema === 'boolean') return null;
  if (!isObject(schema)) return problem(pointer, 'must be a schema (an object or a boolean)');
  if (depth > MAX_SCHEMA_DEPTH) return problem(pointer, `nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
  for (const [key, value] of Object.entries(schema)) {
    const at = `${pointer}/${escapePointerToken(key)}`;
    const found = checkKeyword(key, value, at, depth);
    if (found !== null) return found;
  }
  return null;
}

function checkKeyword(key: string, value: JsonValue, at: string, depth: number): SchemaProblem | null {
  if (key === 'type') return checkType(value, at);
  if (key === 'required') {
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) return problem(at, 'must be an array of strings');
    return new Set(value).size === value.length ? null : problem(at, 'must not repeat a property name');
  }
  if (key === 'enum') return Array.isArray(value) ? null : problem(at, 'must be an array');
  if (key === 'multipleOf') return typeof value === 'number' && value > 0 ? null : problem(at, 'must be a number greater than 0');
  if (key === 'uniqueItems') return typeof value === 'boolean' ? null : problem(at, 'must be a boolean');
  if (key === 'dependentRequired') {
    if (!isObject(value)) return problem(at, 'must be an object');
    for (const [name, list] of Object.entries(value)) {
      if (!Array.isArray(list) || !list.every((item) => typeof item === 'string'))
        return problem(`${at}/${escapePointerToken(name)}`, 'must be an array of strings');
    }
    return null;
  }
  if (COUNT_KEYWORDS.includes(key))
    return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? null : problem(at, 'must be a non-negative integer');
  if (NUMBER_KEYWORDS.includes(key)) return typeof value === 'number' ? null : problem(at, 'must be a number');
  if (STRING_KEYWORDS.includes(key)) return typeof value === 'string' ? checkPattern(key, value, at) : problem(at, 'must be a string');
  if (SCHEMA_KEYWORDS.includes(key)) {
    // Draft-07 and earlier also allow an array of schemas for items.
    if (key === 'items' && Array.isArray(value)) return checkList(value, at, depth);
    return check(value, at, depth + 1);
  }
  if (SCHEMA_LIST_KEYWORDS.includes(key)) {
    if (!Array.isArray(value) || value.length === 0) return problem(at, 'must be a non-empty array of schemas');
    return checkList(value, at, depth);
  }
  if (SCHEMA_MAP_KEYWORDS.includes(key)) {
    if (!isObject(value)) return problem(at, 'must be an object of schemas');
    for (const [name, sub] of Object.entries(value)) {
      const found = check(sub, `${at}/${escapePointerToken(name)}`, depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  return null; // unknown keywords are allowed, as by the meta-schema (annotations, examples, default…)
}

function checkType(value: JsonValue, at: string): SchemaProblem | null {
  const names = Array.isArray(value) ? value : [value];
  if (Array.isArray(value) && (value.length === 0 || new Set(value).size !== value.length))
    return problem(at, 'must be a non-empty array of distinct type names');
  return names.every((name) => typeof name === 'string' && TYPE_NAMES.has(name))
    ? null
    : problem(at, `must be one of ${[...TYPE_NAMES].join(', ')} (or an array of them)`);
}

function checkList(list: readonly JsonValue[], at: string, depth: number): SchemaProblem | null {
  for (let i = 0; i < list.length; i++) {
    const found = check(list[i] as JsonValue, `${at}/${i}`, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

function checkPattern(key: string, value: string, at: string): SchemaProblem | null {
  if (key !== 'pattern') return null;
  try {
    new RegExp(value, 'u');
    return null;
  } catch {
    return problem(at, 'must be a valid regular expression');
  }
}

function problem(pointer: string, message: string): SchemaProblem {
  return { pointer, message };
}

function isObject(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
