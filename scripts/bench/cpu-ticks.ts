/** A process's CPU time as the benchmarks measure it: fields 14 and 15 of /proc/<pid>/stat, read through lib. */
import { readProcStatLine } from '../../lib/process/proc-table.ts';

/** Clock ticks per second of utime and stime (USER_HZ, 100 on Linux). */
export const TICKS_PER_SECOND = 100;
/** utime and stime (fields 14 and 15) among a stat line's fields, which start at field 3. */
const UTIME_INDEX = 11;
const STIME_INDEX = 12;
/** cutime and cstime (fields 16 and 17): the reaped children's CPU. */
const CUTIME_INDEX = 13;
const CSTIME_INDEX = 14;

/** CPU ticks (utime + stime) of a process, or null once it is gone. */
export function cpuTicks(pid: number): number | null {
  const fields = readProcStatLine(pid)?.fields;
  if (fields === undefined) return null;
  const ticks = Number(fields[UTIME_INDEX]) + Number(fields[STIME_INDEX]);
  return Number.isFinite(ticks) ? ticks : null;
}

/** CPU ticks of a process and of its children it reaped (utime + stime + cutime + cstime), or null once it is gone. */
export function cpuTicksWithChildren(pid: number): number | null {
  const fields = readProcStatLine(pid)?.fields;
  if (fields === undefined) return null;
  const ticks = [UTIME_INDEX, STIME_INDEX, CUTIME_INDEX, CSTIME_INDEX].reduce((sum, i) => sum + Number(fields[i]), 0);
  return Number.isFinite(ticks) ? ticks : null;
}

/** CPU ticks of the children a process reaped (cutime + cstime), or null once it is gone. */
export function reapedChildrenTicks(pid: number): number | null {
  const fields = readProcStatLine(pid)?.fields;
  if (fields === undefined) return null;
  const ticks = Number(fields[CUTIME_INDEX]) + Number(fields[CSTIME_INDEX]);
  return Number.isFinite(ticks) ? ticks : null;
}
