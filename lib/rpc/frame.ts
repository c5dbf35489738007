/** Turns one inbound frame (bytes between newlines) into a parsed message or a -32700 response. */
import { errorResponse, rpcErrors, type ErrorResponse } from './errors.ts';

export type DecodedFrame =
  | { readonly kind: 'message'; readonly value: unknown }
  /** Blank lines (e.g. a stray "\r\n") carry nothing and are skipped without a reply. */
  | { readonly kind: 'blank' }
  | { readonly kind: 'error'; readonly response: ErrorResponse };

// fatal: invalid UTF-8 throws instead of turning into U+FFFD behind our back.
const decoder = new TextDecoder('utf-8', { fatal: true });
const BLANK_RE = /^[ \t\r]*$/;

export function decodeFrame(bytes: Uint8Array): DecodedFrame {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { kind: 'error', response: errorResponse(null, rpcErrors.invalidUtf8().toObject()) };
  }
  if (BLANK_RE.test(text)) return { kind: 'blank' };
  try {
    return { kind: 'message', value: JSON.parse(text) };
  } catch {
    return { kind: 'error', response: errorResponse(null, rpcErrors.parseError().toObject()) };
  }
}

export function oversizeFrameResponse(maxFrameBytes: number): ErrorResponse {
  return errorResponse(null, rpcErrors.frameTooLarge(maxFrameBytes).toObject());
}
