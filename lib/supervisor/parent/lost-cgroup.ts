/**
 * When a supervisor dies without its cleanup report, the run's cgroup is still there with whatever of the
 * run lives: the adapter ends it in one write and the kernel tells when it is empty. Unlike the /proc sweep,
 * this is proof: every process of the run was born inside the cgroup.
 */
import { cgroupPopulation, killCgroupMembers, removeCgroupTreeSettled, waitUntilEmpty } from '../../process/cgroup.ts';

export interface LostCgroupOutcome {
  /** The cgroup existed (the supervisor had created it): its end is the proof, or its failure. */
  readonly existed: boolean;
  /** Nothing was left in it and it was removed. */
  readonly proven: boolean;
}

export async function endLostRunCgroup(dir: string, timeoutMs: number): Promise<LostCgroupOutcome> {
  if (cgroupPopulation(dir) === 'gone') return { existed: false, proven: false };
  await killCgroupMembers(dir, 'cgroup.kill');
  const empty = await waitUntilEmpty(dir, timeoutMs);
  return { existed: true, proven: empty && (await removeCgroupTreeSettled(dir)) };
}
