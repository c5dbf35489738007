/** The probe phase: one short command of the run (the version check) at a time, before the run starts. */
import { MAX_PROBES, RUN_MARKER_ENV } from '../protocol.ts';
import { formatProbeResult } from '../report-parse.ts';
import { newProbeName, pinFile, UNBOUND_PROBE, watchProbe } from './exe-check.ts';
import { startProbe } from './probe.ts';
import {
  adopt,
  CGROUP_REFUSED_MESSAGE,
  PROBE_TRACK_INTERVAL_MS,
  spawnRunProcess,
  track,
  type ProbeMessage,
  type SupervisorState,
} from './supervisor-state.ts';

export function runProbe(s: SupervisorState, message: ProbeMessage): void {
  const refuse = (why: string): void => {
    s.report.write(formatProbeResult(message.id, { kind: 'spawn_error', message: why }, null, null));
  };
  if (s.probe !== null || s.spec !== null) return refuse('a probe or the run is already under way');
  if (s.probesRun >= MAX_PROBES) return refuse(`at most ${MAX_PROBES} probes per run`);
  s.probesRun++;
  const runTracker = s.scope === null ? track(s, PROBE_TRACK_INTERVAL_MS) : null;
  // The answer is bound to the file (and to the image that gave it) only as exe-check.ts proves it.
  // It runs the very file it identified (held open), under a random name that any later exec replaces.
  const viaProc = s.platform === 'linux';
  const pinned = pinFile(message.file, newProbeName(), viaProc);
  let watch = UNBOUND_PROBE;
  let called = false;
  const started = spawnRunProcess(s, () => {
    called = true;
    return startProbe(message, { ...message.env, [RUN_MARKER_ENV]: message.marker }, pinned?.execPath ?? message.file, (outcome) => {
      s.probe = null;
      const bound = watch.settle();
      s.report.write(formatProbeResult(message.id, outcome, bound.fileId, bound.imageId));
      // Tracking may have stopped while idle: follow what the probe left until that is proven gone.
      if (!s.cleaning && s.spec === null && s.scope === null) track(s, PROBE_TRACK_INTERVAL_MS);
    });
  });
  if (!called) {
    pinned?.release();
    return refuse(CGROUP_REFUSED_MESSAGE);
  }
  if (started !== null) {
    watch = watchProbe(started.child, message.file, pinned, viaProc);
    s.probe = started;
    adopt(s, started.child, runTracker);
  }
  pinned?.release();
}
