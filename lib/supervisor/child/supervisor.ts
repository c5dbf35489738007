/**
 * The supervisor process: runs the run's probes (the version check) and then one native CLI, all in its own
 * process group and marked with the run's marker; the native stdout is the supervisor's own fd 1 (the bytes
 * go straight to the adapter, no relay hop); reports on fd 2; on terminate / control EOF / native exit runs
 * the ladder over everything the run started and proves cleanup. Protocol: lib/supervisor/protocol.ts.
 * Phases: placement (supervisor-state.ts), probes (run-probe.ts), the run (start-native.ts), cleanup
 * (clean-up.ts), all over one SupervisorState.
 */
import {
  CONTROL_LINE_MAX_BYTES,
  parsePlatformArg,
  SPAWN_ERROR_NO_CGROUP,
  SPAWN_ERROR_NO_PLATFORM,
  type ControlMessage,
} from '../protocol.ts';
import { assertNever } from '../../util/assert-never.ts';
import { createLineSplitter } from '../../util/line-splitter.ts';
import { cleanUp } from './clean-up.ts';
import { parseControlLine } from './control.ts';
import { closeInheritedFds } from './fds.ts';
import { runProbe } from './run-probe.ts';
import { feedNative, startNative } from './start-native.ts';
import { SUPERVISOR_PS_SCAN_ARG } from '../supervisor-args.ts';
import {
  createSupervisorState,
  ownPsTables,
  refusedPlacement,
  reportLine,
  takePlacement,
  type SupervisorOptions,
  type SupervisorState,
} from './supervisor-state.ts';

const NO_PLATFORM_MESSAGE = 'the supervisor was not told its platform (one --platform=linux|darwin argument); it starts nothing';

const SHIELDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * The server's decisions, from the supervisor's command line (lib/supervisor/parent/supervisor-command.ts): its
 * platform (`--platform=`; never process.platform) and the cleanup source. On darwin `ps` is the only source.
 */
export function supervisorOptionsFrom(args: readonly string[]): SupervisorOptions {
  const platform = parsePlatformArg(args);
  return { platform, readTable: args.includes(SUPERVISOR_PS_SCAN_ARG) || platform === 'darwin' ? ownPsTables : null };
}

/** Runs the supervisor on this process's stdio; it exits the process itself once the report is written. */
export function runSupervisor(options: SupervisorOptions = supervisorOptionsFrom(process.argv.slice(2))): void {
  // Group signals (SIGTERM to -pgid) reach the supervisor too; it must outlive them to report.
  for (const signal of SHIELDED_SIGNALS) process.on(signal, () => {});
  closeInheritedFds(options.platform);
  // fd 1 is never opened as a stream here: that would make the descriptor non-blocking, and the native
  // process shares it.
  const s = createSupervisorState(options);
  const splitter = createLineSplitter({
    maxLineBytes: CONTROL_LINE_MAX_BYTES,
    onLine: (frame) => {
      onControl(s, parseControlLine(frame.toString('utf8')));
    },
    onOversize: () => {
      onControl(s, null);
    },
  });
  process.stdin.on('data', (chunk: Buffer) => {
    splitter.push(chunk);
  });
  const onEof = (): void => {
    splitter.end();
    // The server is done or gone: no table answer will come, so tables come from the supervisor's own ps.
    s.tables.onControlEnd();
    cleanUp(s, true, 'control_eof');
  };
  process.stdin.once('end', onEof);
  process.stdin.once('error', onEof);
}

function onControl(s: SupervisorState, message: ControlMessage | null): void {
  // Table answers are routed in every phase: the ladder reads tables while it cleans up.
  if (message?.type === 'table') {
    if (!s.tables.onAnswer(message)) refuseControl(s);
    return;
  }
  if (s.cleaning) return;
  if (message?.type === 'input' || message?.type === 'input_end') {
    feedNative(s, message);
    return;
  }
  if (s.platform === null) {
    // Not told its platform: it could not know which process layer to use, so it starts nothing.
    if (s.spec === null) reportLine(s, { type: 'spawn_error', code: SPAWN_ERROR_NO_PLATFORM, message: NO_PLATFORM_MESSAGE });
    cleanUp(s, true, 'no_platform');
    return;
  }
  if (message === null || (message.type !== 'terminate' && !takePlacement(s, message))) {
    refuseControl(s);
    return;
  }
  const refused = message.type === 'terminate' ? null : refusedPlacement(s);
  if (refused !== null) {
    // A forced cgroup backend never degrades to /proc tracking: nothing of this run is started.
    reportLine(s, { type: 'spawn_error', code: SPAWN_ERROR_NO_CGROUP, message: `${refused}; nothing was started` });
    cleanUp(s, false, 'cgroup_unavailable');
    return;
  }
  switch (message.type) {
    case 'probe':
      runProbe(s, message);
      break;
    case 'spawn':
      if (s.spec === null && s.probe === null) startNative(s, message);
      break;
    case 'terminate':
      cleanUp(s, true, `terminate:${message.reason}`);
      break;
    default:
      assertNever(message);
  }
}

/** A malformed control line ends the run (a table answer to no request is one too). */
function refuseControl(s: SupervisorState): void {
  if (s.cleaning) return;
  if (s.spec === null) reportLine(s, { type: 'spawn_error', code: 'BAD_CONTROL', message: 'malformed control message' });
  cleanUp(s, true, 'bad_control');
}
