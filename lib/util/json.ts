import { escapePointerToken } from './json-pointer.ts';

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The plain object a JSON text holds; null when the text is not JSON or holds anything but an object. */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return isPlainObject(value) ? value : null;
}

/**
 * A JSON copy of a plain, JSON-shaped value (such as a deeply readonly tree that was parsed from JSON), typed
 * by construction instead of a cast; throws TypeError naming the JSON path of anything JSON cannot hold.
 */
export function copyJsonObject(value: object, path = ''): JsonObject {
  const copy = copyJson(value, path);
  if (!isPlainObject(copy)) throw new TypeError(`${path || '/'}: not a JSON object`);
  return copy;
}

function copyJson(value: unknown, path: string): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (Array.isArray(value)) return value.map((item: unknown, i) => copyJson(item, `${path}/${i}`));
  if (isPlainObject(value) && [Object.prototype, null].includes(Object.getPrototypeOf(value))) {
    // fromEntries defines own properties, so a "__proto__" key stays a key.
    const entries = Object.entries(value).filter(([, item]) => item !== undefined);
    return Object.fromEntries(entries.map(([key, item]) => [key, copyJson(item, `${path}/${escapePointerToken(key)}`)]));
  }
  throw new TypeError(`${path || '/'}: not a JSON value`);
}
