/** Adapter run handles: opaque, high-entropy, and never derived from a native session id. */

/** Injected randomness (production: node:crypto randomBytes). */
export type RandomBytes = (bytes: number) => Uint8Array;

export const RUN_ID_PREFIX = 'run_';
/** 128 bits: unguessable across clients sharing one adapter process. */
export const RUN_ID_RANDOM_BYTES = 16;
/** base64url of 16 bytes without padding is exactly 22 characters. */
export const RUN_ID_PATTERN = /^run_[A-Za-z0-9_-]{22}$/;

/** A fresh run id: 'run_' + base64url(16 random bytes). Throws if the source returns the wrong length. */
export function newRunId(random: RandomBytes): string {
  const bytes = random(RUN_ID_RANDOM_BYTES);
  if (bytes.length !== RUN_ID_RANDOM_BYTES) {
    throw new Error(`random source returned ${bytes.length} bytes, expected ${RUN_ID_RANDOM_BYTES}`);
  }
  return RUN_ID_PREFIX + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/** Syntax check only: a well-formed id may still be unknown, evicted or released. */
export function isRunId(value: unknown): value is string {
  return typeof value === 'string' && RUN_ID_PATTERN.test(value);
}
