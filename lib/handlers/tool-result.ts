/**
 * The one place that shapes a tool outcome into a CallToolResult.
 * - text content: a one-line summary, a newline, then the serialized result object (on failure the
 *   serialized `{ error, result }`), so clients without structured content still get the data; when
 *   structuredContent carries the data and the outcome has a human text (a run's answer), the summary
 *   line and that text instead: the data is not repeated;
 * - structuredContent (2025-06-18 and later only): `{ result }` on success, `{ result, error }` on failure.
 *   A failure's structuredContent is sent only when it conforms to the tool's outputSchema (clients such
 *   as the official SDK validate it even when isError is set); otherwise the text alone carries it;
 * - isError: true marks a failed operation (a protocol problem is a JSON-RPC error instead).
 */
import type { JsonSchema, ToolOutcome } from '../contracts/providers.ts';
import { validate } from '../schema/validate.ts';
import { features, type AnyProtocolVersion } from '../rpc/negotiate.ts';
import type { ToolErrorData } from '../tool-errors.ts';
import type { JsonObject } from '../util/json.ts';

/** The summary line is cut to this many characters; the full data follows it. */
export const MAX_SUMMARY_CHARS = 500;

export interface CallToolResult {
  readonly content: readonly { readonly type: 'text'; readonly text: string }[];
  readonly structuredContent?: JsonObject;
  readonly isError: boolean;
}

export function toCallToolResult(outcome: ToolOutcome, version: AnyProtocolVersion, outputSchema?: JsonSchema): CallToolResult {
  const summary = oneLine(outcome.summary);
  const structured: JsonObject = outcome.ok ? { result: outcome.result } : { result: outcome.result, error: errorObject(outcome.error) };
  const withStructured =
    features.structuredContent(version) && (outcome.ok || outputSchema === undefined || validate(outputSchema, structured).ok);
  // With structuredContent carrying the data, a human text (a run's answer) replaces the serialized copy.
  const human = withStructured && outcome.text !== undefined;
  // Serialized only when the text carries the data: a large result is otherwise copied for nothing.
  const text = human
    ? outcome.text === ''
      ? summary
      : `${summary}\n\n${outcome.text}`
    : `${summary}\n${JSON.stringify(outcome.ok ? outcome.result : { error: structured['error'] ?? null, result: outcome.result })}`;
  const content = [{ type: 'text', text }] as const;
  return withStructured ? { content, structuredContent: structured, isError: !outcome.ok } : { content, isError: !outcome.ok };
}

function errorObject(error: ToolErrorData): JsonObject {
  return error.path === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, path: error.path };
}

function oneLine(text: string): string {
  const flat = text.replace(/[\r\n\u2028\u2029]+/g, ' ').trim();
  return flat.length > MAX_SUMMARY_CHARS ? `${flat.slice(0, MAX_SUMMARY_CHARS - 1)}…` : flat;
}
