/**
 * The provider-work snapshot (computer-mcp://runtime/work/v1): every retained run of this adapter
 * process as an owner. Not completed runs (waiting, version check, startup, streaming, stopping) and
 * completed runs with confirmed cleanup are `active` owners (confirmed completion alone does not end
 * ownership; release or eviction does); completed runs whose cleanup was not confirmed are `uncertain`.
 * A snapshot is only valid when every retained run is host-bound (has acquired_by): otherwise it is
 * an error, because it cannot prove a complete host-bound picture.
 */
import type { JsonObject } from '../util/json.ts';
import type { RunRegistry } from './registry.ts';

export const WORK_FORMAT_VERSION = 1;
export const WORK_URI = 'computer-mcp://runtime/work/v1';
/** Unbound run ids named in an error message, at most. */
const MAX_UNBOUND_IDS_SHOWN = 4;

export type WorkOwnership = 'active' | 'uncertain';

export type WorkSnapshotOutcome =
  | { readonly ok: true; readonly revision: number; readonly body: JsonObject }
  | {
      readonly ok: false;
      readonly code: 'work_snapshot_unbound';
      readonly message: string;
      /** The revision of the last valid snapshot served, or null if none was. Errors never move it. */
      readonly last_valid_revision: number | null;
    };

type RegistryView = Pick<RunRegistry<unknown>, 'revision' | 'entries'>;

/** Pure: builds the snapshot from the registry's current state; `lastValidRevision` only feeds error text. */
export function buildWorkSnapshot(
  registry: RegistryView,
  instanceId: string,
  lastValidRevision: number | null = null,
): WorkSnapshotOutcome {
  const entries = registry.entries();
  const unbound = entries.filter((e) => e.acquired_by === null).map((e) => e.run_id);
  if (unbound.length > 0) {
    const shown = unbound.slice(0, MAX_UNBOUND_IDS_SHOWN).join(', ') + (unbound.length > MAX_UNBOUND_IDS_SHOWN ? ', …' : '');
    const last = lastValidRevision === null ? 'no valid snapshot was served yet' : `the last valid revision stays ${lastValidRevision}`;
    return {
      ok: false,
      code: 'work_snapshot_unbound',
      message: `${unbound.length} retained run(s) were started without a work-invocation id (${shown}), so no complete host-bound snapshot exists; release them or let eviction end them (${last}).`,
      last_valid_revision: lastValidRevision,
    };
  }
  const owners: JsonObject[] = entries.map((e) => ({
    kind: 'claude.run',
    run_id: e.run_id,
    acquired_by: e.acquired_by,
    state: e.state,
    completed: e.completed,
    cleanup_confirmed: e.cleanup_confirmed,
    ownership: ownershipOf(e),
  }));
  const body: JsonObject = {
    format_version: WORK_FORMAT_VERSION,
    uri: WORK_URI,
    instance_id: instanceId,
    revision: registry.revision,
    owners,
  };
  return { ok: true, revision: registry.revision, body };
}

export function ownershipOf(entry: { readonly completed: boolean; readonly cleanup_confirmed: boolean }): WorkOwnership {
  return entry.completed && !entry.cleanup_confirmed ? 'uncertain' : 'active';
}

export interface WorkSnapshotReader {
  read(): WorkSnapshotOutcome;
  lastValidRevision(): number | null;
}

/**
 * Stateful reader for one adapter process: remembers the last valid revision so errors report it
 * and never replace it. Revisions come from the registry, so reads never consume or skip one.
 */
/** `instanceId` may be a function: the id is then made at the first read, not at composition. */
export function createWorkSnapshotReader(registry: RegistryView, instanceId: string | (() => string)): WorkSnapshotReader {
  let lastValid: number | null = null;
  return {
    read() {
      const outcome = buildWorkSnapshot(registry, typeof instanceId === 'string' ? instanceId : instanceId(), lastValid);
      if (outcome.ok) lastValid = outcome.revision;
      return outcome;
    },
    lastValidRevision: () => lastValid,
  };
}
