/**
 * Generates invalid tool arguments from an advertised input schema, each with the JSON Pointer path the
 * validator must name. Every value that could be echoed carries a unique marker string.
 */
import type { JsonSchema } from '../../lib/contracts/providers.ts';

export interface InvalidCase {
  readonly label: string;
  readonly args: unknown;
  readonly path: string;
}

export type MarkerSource = () => string;

const pointer = (token: string): string => `/${token.replaceAll('~', '~0').replaceAll('/', '~1')}`;

function typeAccepts(type: JsonSchema['type'], value: unknown): boolean {
  switch (type) {
    case undefined:
      return true;
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'null':
      return value === null;
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return false;
  }
}

/** A value the schema accepts; strings carry a marker where the schema allows it. */
export function validValue(schema: JsonSchema, marker: MarkerSource): unknown {
  switch (schema.type) {
    case 'string': {
      if (schema.enum !== undefined) return schema.enum[0];
      if (schema.format === 'uuid') return '0b8f6f7e-8d0c-4c5e-9a51-1f2d3c4b5a69';
      const text = `v${marker()}`;
      return schema.maxLength !== undefined ? text.slice(0, schema.maxLength) : text;
    }
    case 'integer':
      return schema.minimum ?? 1;
    case 'number':
      return (schema.exclusiveMinimum ?? schema.minimum ?? 0) + 1;
    case 'boolean':
      return true;
    case 'array':
      return schema.items === undefined ? [] : [validValue(schema.items, marker)];
    case 'object':
      return {};
    case 'null':
      return null;
    default:
      return marker();
  }
}

/** Values that break `schema`, each with the sub-path (below the value itself) the validator must name. */
export function badValues(schema: JsonSchema, marker: MarkerSource): { label: string; value: unknown; sub: string }[] {
  const out: { label: string; value: unknown; sub: string }[] = [];
  const wrongTypes: [string, unknown][] = [
    ['string', marker()],
    ['fraction', 1.5],
    ['integer', 7],
    ['boolean', true],
    ['null', null],
    ['array', [marker(), { [marker()]: marker() }]],
    ['object', { [marker()]: marker(), nested: { deep: [marker()] } }],
  ];
  for (const [label, value] of wrongTypes)
    if (!typeAccepts(schema.type, value)) out.push({ label: `wrong type (${label})`, value, sub: '' });
  if (schema.enum !== undefined) out.push({ label: 'not in enum', value: typeof schema.enum[0] === 'string' ? marker() : 12345, sub: '' });
  if (schema.type === 'string') {
    if ((schema.minLength ?? 0) > 0) out.push({ label: 'too short', value: '', sub: '' });
    if (schema.maxLength !== undefined) out.push({ label: 'too long', value: marker() + 'x'.repeat(schema.maxLength), sub: '' });
    if (schema.format === 'uuid') out.push({ label: 'not a uuid', value: `${marker()}-not-a-uuid`, sub: '' });
    if (schema.pattern !== undefined) {
      const re = new RegExp(schema.pattern, 'u');
      const candidates = [`-${marker()}`, `${marker()}\u0000`, `\u0000${marker()}`];
      const breaking = candidates.find((c) => !re.test(c) && (schema.maxLength === undefined || c.length <= schema.maxLength));
      if (breaking !== undefined) out.push({ label: 'pattern', value: breaking, sub: '' });
    }
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    if (schema.minimum !== undefined) out.push({ label: 'below minimum', value: schema.minimum - 1, sub: '' });
    if (schema.maximum !== undefined) out.push({ label: 'above maximum', value: schema.maximum + 1, sub: '' });
    if (schema.exclusiveMinimum !== undefined) out.push({ label: 'at exclusive minimum', value: schema.exclusiveMinimum, sub: '' });
    if (schema.type === 'integer') out.push({ label: 'not an integer', value: (schema.minimum ?? 1) + 0.5, sub: '' });
    out.push({ label: 'huge', value: schema.maximum === undefined ? -1e308 : 1e308, sub: '' });
  }
  if (schema.type === 'array') {
    const item = schema.items === undefined ? marker() : validValue(schema.items, marker);
    if (schema.maxItems !== undefined)
      out.push({
        label: 'too many items',
        value: Array.from({ length: schema.maxItems + 1 }, () => (typeof item === 'string' ? `v${marker()}` : item)),
        sub: '',
      });
    if ((schema.minItems ?? 0) > 0) out.push({ label: 'too few items', value: [], sub: '' });
    if (schema.items !== undefined) {
      for (const bad of badValues(schema.items, marker))
        out.push({ label: `item: ${bad.label}`, value: [item, bad.value], sub: `/1${bad.sub}` });
    }
  }
  if (schema.type === 'object' && schema.properties !== undefined) {
    for (const c of objectCases(schema, {}, marker)) out.push({ label: c.label, value: c.args, sub: c.path });
  }
  return out;
}

/** Invalid variants of `base` (valid arguments for `schema`): one broken property, a missing required one, an unknown one. */
export function objectCases(schema: JsonSchema, base: Record<string, unknown>, marker: MarkerSource): InvalidCase[] {
  const cases: InvalidCase[] = [];
  const properties = schema.properties ?? {};
  for (const [name, propSchema] of Object.entries(properties)) {
    for (const bad of badValues(propSchema, marker)) {
      cases.push({ label: `${name}: ${bad.label}`, args: { ...base, [name]: bad.value }, path: `${pointer(name)}${bad.sub}` });
    }
  }
  for (const name of schema.required ?? []) {
    const { [name]: _removed, ...rest } = base;
    cases.push({ label: `missing ${name}`, args: rest, path: pointer(name) });
  }
  if (schema.additionalProperties === false) {
    cases.push({ label: 'unknown property', args: { ...base, unknown_property: { [marker()]: [marker()] } }, path: '/unknown_property' });
  }
  return cases;
}

/** Valid arguments: the required properties only. */
export function baseArgs(schema: JsonSchema, marker: MarkerSource): Record<string, unknown> {
  const base: Record<string, unknown> = {};
  for (const name of schema.required ?? []) base[name] = validValue(schema.properties?.[name] ?? {}, marker);
  return base;
}

/** A deterministic PRNG (mulberry32) so a failing fuzz case can be replayed from its seed. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
