/** Small statistics and formatting helpers for the benchmarks (dev-only). */

/** The p-th percentile (0..100) by nearest rank over a copy of `values`; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export const ms = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(value < 10 ? 2 : 1)} ms` : 'n/a');
export const ratio = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a');
export const mib = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
export const mbps = (bytesPerMs: number): string => `${((bytesPerMs * 1000) / (1024 * 1024)).toFixed(0)} MiB/s`;

/** CLOCK_MONOTONIC in milliseconds (libuv's hrtime): comparable across processes of one machine. */
export function monoMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
