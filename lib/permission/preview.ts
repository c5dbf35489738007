/** How a permission question shows the tool input to the person, and how long a deny reason may be. Pure. */
import type { JsonValue } from '../util/json.ts';

/** The shown input is cut to this many characters of its JSON text; its full size is shown beside it. */
export const MAX_QUESTION_INPUT_CHARS = 4096;
/** A deny reason given by the person is cut to this many characters. */
export const MAX_DENY_REASON_CHARS = 1024;

/** The input as the person sees it: JSON text (escaped), cut with its full size stated. */
export function inputPreview(input: JsonValue): { readonly text: string; readonly bytes: number; readonly truncated: boolean } {
  const text = JSON.stringify(input);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (text.length <= MAX_QUESTION_INPUT_CHARS) return { text, bytes, truncated: false };
  return { text: `${text.slice(0, MAX_QUESTION_INPUT_CHARS)}…`, bytes, truncated: true };
}
