/** Real prepared supervisors whose probes are counted where they reach the supervisor: a reused early answer never does. */
import { prepareSupervisor, type PreparedSupervisor, type ProbeSpec } from '../../lib/supervisor/parent/run-supervised.ts';
import type { PrepareFn } from '../../lib/supervisor/parent/spare.ts';

export function counting(): { prepare: PrepareFn; probes: ProbeSpec[]; prepared: PreparedSupervisor[] } {
  const probes: ProbeSpec[] = [];
  const prepared: PreparedSupervisor[] = [];
  const prepare: PrepareFn = (command) => {
    const supervisor = prepareSupervisor(command);
    prepared.push(supervisor);
    return {
      ...supervisor,
      probe: (spec) => {
        probes.push(spec);
        return supervisor.probe(spec);
      },
    };
  };
  return { prepare, probes, prepared };
}
