/**
 * Composes the runs' records for one server: names the state directory (the option, else the platform's
 * default), opens the store, and says who this server is and how to judge another's owner (Linux: /proc; macOS:
 * signal 0 only, so a pid that was reused reads as alive and its runs stay unknown, the safe side).
 */
import { judgeOwner, formatOwner, parseOwner, type OwnerIdentity, type OwnerVerdict } from '../process/owner.ts';
import { ownPidSpace, processState, selfOwner } from '../process/proc-table.ts';
import { pidPresenceBySignal } from '../process/occupants.ts';
import type { SupportedPlatform } from '../process/platform.ts';
import type { Clock } from '../util/clock.ts';
import { defaultStateDir } from '../state/paths.ts';
import { openStateStore } from '../state/store.ts';
import { darwinSelfOwner, DARWIN_PID_SPACE } from './darwin-owner.ts';
import { createRunRecords, type RunRecords, type RunRecordsDeps } from './run-records.ts';

export interface StateWiring {
  /** The --state-dir option (library: stateDir); null: the platform's default. */
  readonly stateDir: string | null;
  readonly platform: SupportedPlatform;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
  readonly log: (line: string) => void;
  readonly instance: () => string;
  readonly outcomeOf: RunRecordsDeps['outcomeOf'];
}

export function wireRunRecords(w: StateWiring): RunRecords {
  const os = process.getBuiltinModule('node:os');
  const dir = w.stateDir ?? defaultStateDir(w.platform, w.env, os.homedir());
  const store = openStateStore({
    dir,
    log: w.log,
    nowMs: () => w.clock.wallNow(),
    random: (n) => process.getBuiltinModule('node:crypto').randomBytes(n),
    uid: process.getuid?.() ?? -1,
  });
  let self: OwnerIdentity | null | undefined;
  const me = (): OwnerIdentity | null =>
    self !== undefined ? self : (self = w.platform === 'linux' ? selfOwner() : darwinSelfOwner(Date.now(), process.uptime(), process.pid));
  return createRunRecords({
    store,
    clock: w.clock,
    instance: w.instance,
    owner: () => {
      const owner = me();
      return owner === null ? null : formatOwner(owner);
    },
    host: os.hostname() || null,
    judge: (text) => judge(w.platform, text, me()),
    outcomeOf: w.outcomeOf,
  });
}

function judge(platform: SupportedPlatform, text: string, self: OwnerIdentity | null): OwnerVerdict | 'rebooted' | null {
  const owner = parseOwner(text);
  if (owner === null) return null;
  if (platform === 'linux') {
    const here = ownPidSpace();
    if (here === null) return null;
    // Every process of another boot is gone; another pid namespace of this boot cannot be looked at from here.
    if (owner.boot !== here.boot) return 'rebooted';
    return judgeOwner(owner, here, self, processState);
  }
  if (owner.pidNamespace !== DARWIN_PID_SPACE.pidNamespace) return null;
  return pidPresenceBySignal(owner.pid) === 'gone' ? 'dead' : null;
}
