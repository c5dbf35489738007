/**
 * Adapter run handles: opaque, high-entropy, never derived from a native session id, and carrying the server
 * instance that made them. `run_` + base64url(the instance's 16 bytes) + base64url(16 random bytes). The
 * instance is the adapter's instance_id (a UUID); a later server reads it back to tell its own handles from
 * those of a server that is gone (lib/state/). The instance part proves nothing by itself: an id is a past
 * run of this product only when the state directory holds that run's record, written by the server that ran it.
 */

/** Injected randomness (production: node:crypto randomBytes). */
export type RandomBytes = (bytes: number) => Uint8Array;

export const RUN_ID_PREFIX = 'run_';
/** 128 bits: unguessable across clients sharing one adapter process. */
export const RUN_ID_RANDOM_BYTES = 16;
/** A UUID's bytes. */
export const INSTANCE_BYTES = 16;
/** base64url of 16 bytes without padding is exactly 22 characters; the id holds two such parts. */
const PART_CHARS = 22;
export const RUN_ID_PATTERN = /^run_[A-Za-z0-9_-]{44}$/;

/** A fresh run id of `instance` (a UUID). Throws if the source returns the wrong length or the instance is no UUID. */
export function newRunId(random: RandomBytes, instance: string): string {
  const bytes = random(RUN_ID_RANDOM_BYTES);
  if (bytes.length !== RUN_ID_RANDOM_BYTES) {
    throw new Error(`random source returned ${bytes.length} bytes, expected ${RUN_ID_RANDOM_BYTES}`);
  }
  return RUN_ID_PREFIX + instanceTag(instance) + toBase64url(bytes);
}

/** Syntax check only: a well-formed id may still be unknown, evicted, released, forged or another server's. */
export function isRunId(value: unknown): value is string {
  return typeof value === 'string' && RUN_ID_PATTERN.test(value) && runIdInstance(value) !== null;
}

/** The instance (a lower-case UUID) a well-formed run id names; null for anything else (also a non-canonical part). */
export function runIdInstance(runId: string): string | null {
  if (!RUN_ID_PATTERN.test(runId)) return null;
  const tag = runId.slice(RUN_ID_PREFIX.length, RUN_ID_PREFIX.length + PART_CHARS);
  const random = runId.slice(RUN_ID_PREFIX.length + PART_CHARS);
  const bytes = Buffer.from(tag, 'base64url');
  // Only the canonical spelling counts: two spellings of one instance would be two ids of one run.
  if (bytes.length !== INSTANCE_BYTES || bytes.toString('base64url') !== tag) return null;
  if (Buffer.from(random, 'base64url').toString('base64url') !== random) return null;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A UUID instance as the id's 22 characters. Throws on anything but a UUID. */
export function instanceTag(instance: string): string {
  if (!/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(instance)) {
    throw new Error('a run id instance must be a UUID');
  }
  return Buffer.from(instance.replaceAll('-', ''), 'hex').toString('base64url');
}

/** A version-4 UUID from 16 random bytes (the instance of a registry given none). */
export function uuidFromRandom(random: RandomBytes): string {
  const bytes = Buffer.from(random(INSTANCE_BYTES));
  if (bytes.length !== INSTANCE_BYTES) throw new Error(`random source returned ${bytes.length} bytes, expected ${INSTANCE_BYTES}`);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function toBase64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}
