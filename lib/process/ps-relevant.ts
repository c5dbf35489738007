/**
 * The rows of one `ps` table a supervisor on the portable source can need, so a server parses its table once and
 * sends each supervisor a few rows instead of the whole machine. Pure.
 *
 * Every process of a run started at or after its supervisor: the supervisor starts them, and a process can only
 * join a group or session of its own ancestry. So a supervisor needs:
 * - its own row (its start is the floor; a table without it is refused by the tracker, as before);
 * - every row whose start is at or after that floor, or has no start (candidates for the run and for the
 *   unattributed orphans: lib/supervisor/child/ps-tracker.ts);
 * - every descendant (by ppid) of those, and every member of a group one of them leads, whatever its start:
 *   a start rendered in local time can read earlier than the floor (a clock set back, the end of daylight
 *   saving time), and a process linked to the run is kept by its link, not its start;
 * - for each row kept, its parent's row and its group leader's row (the tracker asks whether those are the
 *   run's, or a stranger's), without their descendants.
 * A tracked process left out all the same (unlinked, with a start read as before the floor) is not taken for
 * gone: the tracker forgets an identity only when its pid is listed with another start or no longer exists.
 */
import type { PsRow } from './ps-table.ts';

/** One table indexed once for every supervisor it is filtered for. */
export interface PsTableIndex {
  readonly rows: readonly PsRow[];
  readonly byPid: ReadonlyMap<number, PsRow>;
  readonly children: ReadonlyMap<number, readonly PsRow[]>;
  readonly members: ReadonlyMap<number, readonly PsRow[]>;
}

export function indexPsTable(rows: readonly PsRow[]): PsTableIndex {
  const byPid = new Map<number, PsRow>();
  const children = new Map<number, PsRow[]>();
  const members = new Map<number, PsRow[]>();
  const add = (map: Map<number, PsRow[]>, key: number, row: PsRow): void => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [row]);
    else list.push(row);
  };
  for (const row of rows) {
    byPid.set(row.pid, row);
    add(children, row.ppid, row);
    add(members, row.pgid, row);
  }
  return { rows, byPid, children, members };
}

/** The rows `supervisorPid` can need, in table order; none when the table does not list it. */
export function rowsForSupervisor(index: PsTableIndex, supervisorPid: number): PsRow[] {
  const self = index.byPid.get(supervisorPid);
  if (self === undefined) return [];
  const floor = self.start?.lstart ?? null;
  // Without its own start the tracker refuses the table anyway; the row alone says so.
  if (floor === null) return [self];
  const kept = new Set<number>();
  const queue: PsRow[] = [];
  const keep = (row: PsRow): void => {
    if (kept.has(row.pid)) return;
    kept.add(row.pid);
    queue.push(row);
  };
  keep(self);
  for (const row of index.rows) if (row.start === null || row.start.lstart >= floor) keep(row);
  for (let row = queue.pop(); row !== undefined; row = queue.pop()) {
    for (const child of index.children.get(row.pid) ?? []) keep(child);
    // Group 0 (kernel threads on Linux) is led by no process.
    if (row.pid > 0) for (const member of index.members.get(row.pid) ?? []) keep(member);
  }
  const context = new Set<number>();
  for (const pid of kept) {
    const row = index.byPid.get(pid)!;
    for (const other of [row.ppid, row.pgid]) if (!kept.has(other) && index.byPid.has(other)) context.add(other);
  }
  return index.rows.filter((row) => kept.has(row.pid) || context.has(row.pid));
}
