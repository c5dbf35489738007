/**
 * The private line protocol between the permission bridge (a child of the nested CLI) and the broker of
 * its run (inside the adapter), over a Unix socket in a private directory. Pure: shapes, parsing,
 * formatting. The bridge only ever asks; decisions flow only from the broker to the bridge, so nothing
 * that can reach the socket (the nested model included) can answer a question.
 */
import { parseJsonObject, type JsonObject, type JsonValue } from '../util/json.ts';

/** One socket line may not exceed this before its newline (a tool input larger than this is denied). */
export const MAX_BRIDGE_LINE_BYTES = 1024 * 1024;
/** The shown input is cut to this many characters of its JSON text; its full size is shown beside it. */
export const MAX_QUESTION_INPUT_CHARS = 4096;
/** A deny reason given by the person is cut to this many characters. */
export const MAX_DENY_REASON_CHARS = 1024;
/**
 * A question's id on the socket (the bridge numbers them: `q1`, `q2`, ...) may not be longer: the broker
 * keeps it while the question waits, and anything that read the token could otherwise make it 1 MiB.
 */
export const MAX_BRIDGE_ID_CHARS = 128;

/** bridge → broker */
export type BridgeMessage =
  | { readonly t: 'hello'; readonly token: string }
  | { readonly t: 'ask'; readonly id: string; readonly tool_name: string; readonly input: JsonObject; readonly tool_use_id: string }
  /** The CLI withdrew the call (notifications/cancelled): the question is void. */
  | { readonly t: 'withdraw'; readonly id: string };

/** broker → bridge */
export interface DecisionMessage {
  readonly t: 'decision';
  readonly id: string;
  readonly behavior: 'allow' | 'deny';
  readonly message: string;
}

const isBridgeId = (id: unknown): id is string => typeof id === 'string' && id.length <= MAX_BRIDGE_ID_CHARS;

/** null for anything malformed, an id over MAX_BRIDGE_ID_CHARS included (the broker then drops the connection). */
export function parseBridgeMessage(line: string): BridgeMessage | null {
  const o = parseJsonObject(line);
  if (o === null) return null;
  switch (o['t']) {
    case 'hello':
      return typeof o['token'] === 'string' ? { t: 'hello', token: o['token'] } : null;
    case 'ask': {
      const input = o['input'];
      if (!isBridgeId(o['id']) || typeof o['tool_name'] !== 'string' || typeof o['tool_use_id'] !== 'string') return null;
      if (typeof input !== 'object' || input === null || Array.isArray(input)) return null;
      return { t: 'ask', id: o['id'], tool_name: o['tool_name'], input: input as JsonObject, tool_use_id: o['tool_use_id'] };
    }
    case 'withdraw':
      return isBridgeId(o['id']) ? { t: 'withdraw', id: o['id'] } : null;
    default:
      return null;
  }
}

export function parseDecisionMessage(line: string): DecisionMessage | null {
  const o = parseJsonObject(line);
  if (o === null || o['t'] !== 'decision' || typeof o['id'] !== 'string' || typeof o['message'] !== 'string') return null;
  if (o['behavior'] !== 'allow' && o['behavior'] !== 'deny') return null;
  return { t: 'decision', id: o['id'], behavior: o['behavior'], message: o['message'] };
}

/**
 * The one answer shape the pinned CLI accepts from a permission prompt tool (cli-tree.json
 * `permission_prompt_tool`): a single text block whose text is the JSON decision, never structuredContent.
 * Allow echoes the input unchanged (a changed object would run as changed).
 */
export function nativeDecisionText(behavior: 'allow' | 'deny', input: JsonObject, message: string): string {
  return JSON.stringify(behavior === 'allow' ? { behavior: 'allow', updatedInput: input } : { behavior: 'deny', message });
}

/** The input as the person sees it: JSON text (escaped), cut with its full size stated. */
export function inputPreview(input: JsonValue): { readonly text: string; readonly bytes: number; readonly truncated: boolean } {
  const text = JSON.stringify(input);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (text.length <= MAX_QUESTION_INPUT_CHARS) return { text, bytes, truncated: false };
  return { text: `${text.slice(0, MAX_QUESTION_INPUT_CHARS)}…`, bytes, truncated: true };
}
