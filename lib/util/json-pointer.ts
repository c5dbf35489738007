/** JSON Pointer (RFC 6901) reference tokens, as every error path in lib/ spells them. */

/** A property name in a pointer is cut here, so a path never carries a long submitted key whole. */
export const MAX_POINTER_TOKEN_CHARS = 128;

/** Escapes one reference token (`~` as `~0`, `/` as `~1`), cut at MAX_POINTER_TOKEN_CHARS. */
export function escapePointerToken(token: string): string {
  const cut = token.length > MAX_POINTER_TOKEN_CHARS ? `${token.slice(0, MAX_POINTER_TOKEN_CHARS)}…` : token;
  return cut.replaceAll('~', '~0').replaceAll('/', '~1');
}
