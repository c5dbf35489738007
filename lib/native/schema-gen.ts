/**
 * The native-option properties of the tools' input schemas, generated from the tree so the
 * contract is written once. Every rule buildNativeArgv enforces is expressed here too (a spec
 * proves the two agree), so schema validation rejects first and names the same path. The one
 * exception is the inside of a json_schema value (a caller's JSON Schema): only "an object" is
 * expressed here; its structure and size are checked by buildNativeArgv, at the inner path.
 */
import { assertNever } from '../util/assert-never.ts';
import { UUID_PATTERN } from './tree.ts';
import type { CliOption, CliTree } from './tree.ts';
import type { JsonSchema } from '../contracts/providers.ts';

/** Non-empty, no leading '-' (it would parse as a flag), no NUL. */
export const OPTION_TEXT_PATTERN = '^[^-\\u0000][^\\u0000]*$';

/** One JSON Schema property per declared option, keyed by its MCP argument name, in tree order. */
export function getNativeOptionSchemas(tree: CliTree): Record<string, JsonSchema> {
  const properties: Record<string, JsonSchema> = {};
  for (const option of tree.options) properties[option.arg] = getOptionSchema(tree, option);
  return properties;
}

function getOptionSchema(tree: CliTree, option: CliOption): JsonSchema {
  const description = option.description;
  switch (option.value) {
    case 'none':
      return { type: 'boolean', description };
    case 'string':
      return {
        type: 'string',
        description,
        minLength: 1,
        maxLength: tree.limits.max_string_chars,
        pattern: option.pattern ?? OPTION_TEXT_PATTERN,
      };
    case 'uuid':
      return { type: 'string', description, format: 'uuid', pattern: UUID_PATTERN };
    case 'enum':
      return { type: 'string', description, enum: [...option.choices] };
    case 'number':
    case 'integer': {
      const schema: JsonSchema = { type: option.value, description };
      if (option.minimum !== undefined) schema.minimum = option.minimum;
      if (option.exclusive_minimum !== undefined) schema.exclusiveMinimum = option.exclusive_minimum;
      const maximum = option.maximum ?? (option.value === 'integer' ? Number.MAX_SAFE_INTEGER : undefined);
      if (maximum !== undefined) schema.maximum = maximum;
      return schema;
    }
    case 'json_schema':
      // Its structure and size are checked where the argv is built (one path, one message).
      return { type: 'object', description };
    case 'list':
      return {
        type: 'array',
        description,
        maxItems: tree.limits.max_list_items,
        items: { type: 'string', minLength: 1, maxLength: tree.limits.max_list_item_chars, pattern: OPTION_TEXT_PATTERN },
      };
    default:
      return assertNever(option);
  }
}
