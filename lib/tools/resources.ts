import { ResourceError, type ResourceDescriptor, type ResourceProvider } from '../contracts/providers.ts';
import type { JsonObject } from '../util/json.ts';
import { WORK_URI, type WorkSnapshotReader } from '../runs/work-snapshot.ts';

export const CAPABILITIES_URI = 'claude-run://capabilities';

const RESOURCES: readonly ResourceDescriptor[] = [
  {
    uri: CAPABILITIES_URI,
    name: 'capabilities',
    title: 'Adapter capabilities',
    description:
      'Resolved native binary, asserted and tested versions, the cli-tree contract, protocol dates and limits. Never credentials or environment.',
    mimeType: 'application/json',
  },
  {
    uri: WORK_URI,
    name: 'work',
    title: 'Runtime work snapshot',
    description:
      'A complete bounded snapshot of the runs this adapter process owns: instance id, monotonic revision, and per run kind, run_id, acquired_by and state.',
    mimeType: 'application/json',
  },
];

export interface ResourceDeps {
  readonly capabilities: () => JsonObject;
  readonly work: WorkSnapshotReader;
}

export function createResourceProvider(deps: ResourceDeps): ResourceProvider {
  return {
    list: () => RESOURCES,
    read(uri) {
      if (uri === CAPABILITIES_URI) return JSON.stringify(deps.capabilities());
      if (uri === WORK_URI) {
        const outcome = deps.work.read();
        if (!outcome.ok) throw new ResourceError(outcome.code, outcome.message);
        return JSON.stringify(outcome.body);
      }
      throw new ResourceError('resource_not_found', 'Unknown resource');
    },
  };
}
