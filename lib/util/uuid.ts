/** The one UUID syntax of the project (either letter case, as the native CLI accepts). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const UUID_RE = new RegExp(UUID_PATTERN);

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}
