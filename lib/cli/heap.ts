/**
 * The stdio server's one heap setting (never the library's: it does not change its host's V8 flags).
 *
 * V8 doubles its young generation (two semi-spaces, from 1 MiB each up to 16 MiB on 64-bit) whenever the
 * bytes that survived scavenges since the last growth exceed its size, and the pages it touched stay in
 * the process's peak RSS. A server that retains 32 runs (their events, finals and results) and answers them
 * accumulates such survivals by design, so its young generation used to reach 32 MiB of RSS for retained
 * data of 12 MiB (docs/benchmarks.md, memory). Kept at its starting size (growth factor 1 from the start)
 * it is too small for four floods: pipe chunks still queued then survive two scavenges, are promoted, and
 * their buffers wait for a full collection (measured: +40 MiB, as bad as before). So it may grow up to
 * MAX_YOUNG_GENERATION_BYTES and no further: after each collection the growth factor is set to 1 at the
 * cap and back to V8's 2 below it (V8 also shrinks the young generation when allocation is slow). V8 reads
 * --semi-space-growth-factor each time it grows, and Node 20 leaves V8 flags writable after startup
 * (--no-freeze-flags-after-init): spec/e2e/heap.process.test.ts proves the cap on the running Node. Loading
 * node:v8 costs milliseconds, so this runs after the handshake (tools/providers.ts onFirstUse). A launcher that
 * chose its own semi-space flags keeps them.
 */

/** Both semi-spaces together (V8's `new_space` size): 2 MiB each, twice their starting size. */
export const MAX_YOUNG_GENERATION_BYTES = 4 * 1024 * 1024;
/** V8's own growth factor, restored below the cap. */
const V8_GROWTH_FACTOR = 2;

/** True when it installed the cap; false when the launcher passed semi-space flags of its own or froze V8's flags. */
export function holdYoungGeneration(execArgv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  // Flags frozen after startup (--freeze-flags-after-init) make setFlagsFromString a fatal V8 check, not
  // an error: any mention of freezing leaves the heap alone, as does a launcher's own semi-space choice.
  const chosen = [...execArgv, env['NODE_OPTIONS'] ?? ''].some((arg) => /semi[-_]space|freeze[-_]flags/.test(arg));
  if (chosen) return false;
  const v8 = process.getBuiltinModule('node:v8');
  let factor = V8_GROWTH_FACTOR;
  const steer = (): void => {
    const young = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
    const next = young >= MAX_YOUNG_GENERATION_BYTES ? 1 : V8_GROWTH_FACTOR;
    if (next === factor) return;
    factor = next;
    v8.setFlagsFromString(`--semi-space-growth-factor=${next}`);
  };
  steer();
  // One callback per collection, after it: the young generation only changes size in a collection.
  new (process.getBuiltinModule('node:perf_hooks').PerformanceObserver)(steer).observe({ entryTypes: ['gc'] });
  return true;
}
