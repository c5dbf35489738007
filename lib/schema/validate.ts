/**
 * A small JSON Schema validator driven by the very schema objects tools/list advertises.
 * It understands exactly the subset `JsonSchema` declares. Failures name a JSON Pointer path and
 * never echo the submitted value (a property name may appear in the path, bounded in length).
 */
import { isUuid } from '../util/uuid.ts';
import type { JsonSchema } from '../contracts/providers.ts';
import { assertNever } from '../util/assert-never.ts';
import { isPlainObject } from '../util/json.ts';
import { escapePointerToken } from '../util/json-pointer.ts';

export type ValidationResult = { readonly ok: true } | { readonly ok: false; readonly path: string; readonly message: string };

const OK: ValidationResult = { ok: true };
const compiled = new WeakMap<JsonSchema, RegExp>();

/** Validates `value` against `schema`; the first failure wins (document order of the value). */
export function validate(schema: JsonSchema, value: unknown): ValidationResult {
  return check(schema, value, '');
}

function fail(path: string, message: string): ValidationResult {
  return { ok: false, path, message };
}

function check(schema: JsonSchema, value: unknown, path: string): ValidationResult {
  if (schema.type !== undefined && !hasType(schema.type, value)) return fail(path, `must be ${TYPE_NAMES[schema.type]}`);
  if (schema.enum !== undefined && !schema.enum.some((allowed) => allowed === value)) {
    return fail(path, `must be one of: ${schema.enum.map((allowed) => JSON.stringify(allowed)).join(', ')}`);
  }
  if (typeof value === 'string') return checkString(schema, value, path);
  if (typeof value === 'number') return checkNumber(schema, value, path);
  if (Array.isArray(value)) return checkArray(schema, value, path);
  if (isPlainObject(value)) return checkObject(schema, value, path);
  return OK;
}

const TYPE_NAMES = {
  object: 'an object',
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  array: 'an array',
  null: 'null',
} as const satisfies Record<NonNullable<JsonSchema['type']>, string>;

function hasType(type: NonNullable<JsonSchema['type']>, value: unknown): boolean {
  switch (type) {
    case 'object':
      return isPlainObject(value);
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'null':
      return value === null;
    default:
      return assertNever(type);
  }
}

function codePointLength(text: string, stopAfter: number): number {
  // Counts code points (as JSON Schema does) but stops early so huge strings cost little.
  let count = 0;
  for (const _ of text) if (++count > stopAfter) break;
  return count;
}

function checkString(schema: JsonSchema, value: string, path: string): ValidationResult {
  if (schema.minLength !== undefined || schema.maxLength !== undefined) {
    const length = codePointLength(value, schema.maxLength ?? schema.minLength ?? 0);
    if (schema.minLength !== undefined && length < schema.minLength) return fail(path, `must be at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && length > schema.maxLength) return fail(path, `must be at most ${schema.maxLength} characters`);
  }
  if (schema.format === 'uuid' && !isUuid(value)) return fail(path, 'must be a UUID');
  if (schema.pattern !== undefined && !patternOf(schema, schema.pattern).test(value)) {
    return fail(path, 'does not match the required pattern');
  }
  return OK;
}

function patternOf(schema: JsonSchema, pattern: string): RegExp {
  let re = compiled.get(schema);
  if (re === undefined) {
    re = new RegExp(pattern, 'u');
    compiled.set(schema, re);
  }
  return re;
}

function checkNumber(schema: JsonSchema, value: number, path: string): ValidationResult {
  if (schema.minimum !== undefined && value < schema.minimum) return fail(path, `must be at least ${schema.minimum}`);
  if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum)
    return fail(path, `must be greater than ${schema.exclusiveMinimum}`);
  if (schema.maximum !== undefined && value > schema.maximum) return fail(path, `must be at most ${schema.maximum}`);
  return OK;
}

function checkArray(schema: JsonSchema, value: readonly unknown[], path: string): ValidationResult {
  if (schema.minItems !== undefined && value.length < schema.minItems) return fail(path, `must have at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined && value.length > schema.maxItems) return fail(path, `must have at most ${schema.maxItems} items`);
  if (schema.items !== undefined) {
    for (let i = 0; i < value.length; i++) {
      const result = check(schema.items, value[i], `${path}/${i}`);
      if (!result.ok) return result;
    }
  }
  return OK;
}

function checkObject(schema: JsonSchema, value: Record<string, unknown>, path: string): ValidationResult {
  const properties = schema.properties ?? {};
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(value, name)) return fail(`${path}/${escapePointerToken(name)}`, 'is required');
  }
  for (const [name, child] of Object.entries(value)) {
    const childPath = `${path}/${escapePointerToken(name)}`;
    const childSchema = Object.hasOwn(properties, name) ? properties[name] : undefined;
    if (childSchema === undefined) {
      if (schema.additionalProperties === false) return fail(childPath, 'is not an allowed property');
      continue;
    }
    const result = check(childSchema, child, childPath);
    if (!result.ok) return result;
  }
  return OK;
}
