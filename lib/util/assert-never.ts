/** Exhaustiveness guard for closed unions: a missing case is a compile error. */
export function assertNever(value: never): never {
  throw new Error(`unexpected variant: ${JSON.stringify(value)}`);
}
