/**
 * A crowded, busy machine on demand: one perl process forks idle sleepers (to fill the process table) and busy
 * loops, and ends them all when its stdin closes, so they die with whoever started them, also when that is
 * killed. Each of them also ends on its own after MACHINE_LOAD_MAX_S, whatever happens to the perl parent.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';

/** The most processes one load starts, whatever it is asked for. */
export const MACHINE_LOAD_MAX_PROCESSES = 4000;
/** Every process of a load exits on its own after this long (seconds). */
export const MACHINE_LOAD_MAX_S = 600;

const SCRIPT = `
my ($idle, $busy, $max) = @ARGV; my @kids; $| = 1;
for my $i (1 .. $idle + $busy) {
  my $pid = fork; die "fork: $!" if !defined $pid;
  if ($pid == 0) { alarm $max; if ($i > $idle) { 1 while 1 } sleep $max; exit 0 }
  push @kids, $pid;
}
print "ready\\n";
1 while defined(my $line = <STDIN>);
kill 'KILL', @kids; 1 while wait() > 0;
`;

export interface MachineLoad {
  /** Ends every process of the load; resolves once they are reaped. */
  stop(): Promise<void>;
}

export function countProcesses(): number {
  let n = 0;
  for (const name of readdirSync('/proc')) if (name.charCodeAt(0) >= 48 && name.charCodeAt(0) <= 57) n++;
  return n;
}

/** Fills the machine up to about `processes` (idle) plus `busyLoops` spinning processes; resolves once all run. */
export async function startMachineLoad(processes: number, busyLoops: number): Promise<MachineLoad> {
  const idle = Math.max(0, Math.min(MACHINE_LOAD_MAX_PROCESSES, processes - countProcesses() - 1));
  const busy = Math.min(busyLoops, MACHINE_LOAD_MAX_PROCESSES - idle);
  const child = spawn('perl', ['-e', SCRIPT, String(idle), String(busy), String(MACHINE_LOAD_MAX_S)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => {
    child.once('close', () => {
      resolve();
    });
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => {
      resolve();
    });
    child.once('error', reject);
    child.once('close', () => {
      reject(new Error('machine load: perl exited before it was ready'));
    });
  });
  return {
    stop: async () => {
      child.stdin.end();
      await exited;
    },
  };
}
