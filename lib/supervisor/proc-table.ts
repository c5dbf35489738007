/** Reads the live Linux process table from /proc (synchronous: one scan costs a few milliseconds). */
import { readdirSync, readFileSync } from 'node:fs';
import { parseProcStat, type ProcStat } from './proc-stat.ts';

/** The stat of `pid`, or null when it no longer exists (or cannot be read). */
export function readProcStat(pid: number): ProcStat | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return null;
  }
}

/** Every process visible in /proc; processes that vanish mid-scan are skipped. */
export function readProcTable(): ProcStat[] {
  const table: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    const code = name.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    const stat = readProcStat(Number(name));
    if (stat) table.push(stat);
  }
  return table;
}
