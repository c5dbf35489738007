/** ping: answered with an empty result, also before initialize. */
export function ping(): Record<string, never> {
  return {};
}
