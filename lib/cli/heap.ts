/**
 * The stdio server's one heap setting (never the library's: it does not change its host's V8 flags).
 *
 * V8 doubles its young generation (two semi-spaces, from 1 MiB each up to 16 MiB on 64-bit) whenever the
 * bytes that survived scavenges since the last growth exceed its size, and never gives the pages back to
 * the kernel's peak. A server that retains 32 runs (their events, finals and results) and answers them
 * accumulates such survivals by design, so its young generation used to reach 32 MiB of RSS for data that
 * is 12 MiB (docs/benchmarks.md, memory). V8 reads --semi-space-growth-factor each time it grows the young
 * generation, and Node 20 leaves V8 flags writable after startup (--no-freeze-flags-after-init), so a
 * factor of 1 set now keeps the semi-spaces at their starting size: spec/e2e/heap.test.ts proves it on the
 * running Node. Loading node:v8 costs milliseconds, so this runs after the handshake (tools/host.ts
 * onFirstUse). A launcher that chose its own semi-space flags keeps them.
 */
export const SEMI_SPACE_GROWTH_FACTOR = 1;

/** True when it set the flag; false when the launcher passed semi-space flags of its own. */
export function holdYoungGeneration(execArgv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  const chosen = [...execArgv, env['NODE_OPTIONS'] ?? ''].some((arg) => /semi[-_]space/.test(arg));
  if (chosen) return false;
  process.getBuiltinModule('node:v8').setFlagsFromString(`--semi-space-growth-factor=${SEMI_SPACE_GROWTH_FACTOR}`);
  return true;
}
