/**
 * Binds a version answer to the executable image that gave it, and the run to that image, from what the
 * kernel shows in /proc (identities as lib/supervisor/file-id.ts defines them).
 *
 * The probe of a machine-code file is exec'd through a private symlink with a random 15-character name,
 * argv[0] still the file's path: the kernel names the process after the last path it exec'd (`comm`,
 * field 2 of /proc/<pid>/stat), so any later exec renames it. Right after spawn (the exec completed, the
 * child is not reaped) its image (/proc/<pid>/exe) must be the checked file. When its answer arrives on
 * stdout, the child still unreaped (alive or a zombie: /proc/<pid>/stat stays readable until Node reaps
 * it, which it does only after the data already read is handled), it answered itself if it still bears
 * the random name (it exec'd nothing) and it started no process (none listed as its child, none reaped
 * by it). A launcher that exec'd another binary (a version manager's shim) is renamed, and its image then
 * is that binary if it can still be read; a launcher that forked and waited shows children. What cannot be
 * read is unbound.
 * The native: right after spawn its image must be the checked file, or the binary the probe's launcher
 * exec'd. A script's image is its interpreter, which says nothing about the script: scripts are held to
 * their file identity before spawn only (docs/supervisor.md states what remains).
 */
import type { ChildProcess } from 'node:child_process';
import { fileIdentity } from '../file-id.ts';

/** The checked file: its identity, and whether exec runs that very file (ELF), read of the same file. */
export interface CheckedFile {
  readonly id: string;
  readonly machineCode: boolean;
}

/** Identity of the image a process runs (/proc/<pid>/exe followed), or null (gone, a zombie, refused). */
export function imageIdentity(pid: number): string | null {
  return fileIdentity(`/proc/${pid}/exe`);
}

/**
 * The checked file held open: exec'ing `execPath` runs exactly the inode whose identity is `id`, whatever
 * the path names meanwhile. For machine code `execPath` is a symlink `name` in a new private directory to
 * /proc/<supervisor>/fd/<fd> (exec follows that link to the open file, not to a path); a script is run by
 * its path, since its interpreter opens the path again. `release` once spawn returned (the exec is done).
 */
export interface PinnedFile extends CheckedFile {
  readonly execPath: string;
  release(): void;
}

/** Opens and identifies `path` (identity and kind read from the one open file); null when it cannot. */
export function pinFile(path: string, name: string = process.getBuiltinModule('node:path').basename(path)): PinnedFile | null {
  const fs = process.getBuiltinModule('node:fs');
  const { join } = process.getBuiltinModule('node:path');
  if (!path.startsWith('/')) return null;
  let fd: number | null = null;
  let dir: string | null = null;
  const release = (): void => {
    if (fd !== null) fs.closeSync(fd);
    if (dir !== null) fs.rmSync(dir, { recursive: true, force: true });
    fd = dir = null;
  };
  try {
    fd = fs.openSync(path, 'r');
    const st = fs.fstatSync(fd, { bigint: true });
    const id = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    const head = Buffer.alloc(4);
    const machineCode = fs.readSync(fd, head, 0, 4, 0) === 4 && head.equals(ELF_MAGIC);
    if (!machineCode) {
      release();
      return { id, machineCode, execPath: path, release };
    }
    dir = fs.mkdtempSync(join(process.getBuiltinModule('node:os').tmpdir(), 'claude-run-mcp-exec-'));
    const execPath = join(dir, name);
    fs.symlinkSync(`/proc/${process.pid}/fd/${fd}`, execPath);
    return { id, machineCode, execPath, release };
  } catch {
    release();
    return null;
  }
}
const ELF_MAGIC = Buffer.from([0x7f, 0x45, 0x4c, 0x46]);

/** 15 random hex characters: a whole `comm`, which any later exec replaces. */
export function newProbeName(): string {
  return process.getBuiltinModule('node:crypto').randomBytes(8).toString('hex').slice(0, 15);
}

export interface ProbeBinding {
  /** The file identity the answer is bound to (unchanged around the probe, and what it started as), else null. */
  readonly fileId: string | null;
  /** The image that answered, alone: fileId when the file answered itself; else null. */
  readonly imageId: string | null;
}

export interface ProbeWatch {
  /** Called once the probe settled: the binding its answer carries. */
  settle(): ProbeBinding;
}

/** A probe that never started vouches for nothing. */
export const UNBOUND_PROBE: ProbeWatch = { settle: () => ({ fileId: null, imageId: null }) };

/**
 * Watches a probe just spawned from `path` through `pinned` (exec'd as `name`): what answered, at each
 * stdout chunk. Call it synchronously after spawn, before the event loop can reap the child.
 */
export function watchProbe(child: ChildProcess, path: string, pinned: PinnedFile | null, name: string): ProbeWatch {
  const pid = child.pid;
  if (pid === undefined || pinned === null) return UNBOUND_PROBE;
  const before = pinned;
  // A script starts as its interpreter, whose image says nothing about the script: bound to no image.
  let answer: string | null | undefined = before.machineCode ? undefined : null;
  child.stdout?.on('data', () => {
    if (answer === null) return;
    // Once Node reaped the child its pid may be another process's; until then /proc/<pid> is the probe.
    const unreaped = child.exitCode === null && child.signalCode === null;
    const image = unreaped ? answeredAs(pid, name, before.id) : null;
    answer = answer === undefined || answer === image ? image : null;
  });
  return {
    settle() {
      // Still the file the path names: a run is started by path and held to this identity.
      const fileId = fileIdentity(path) === before.id ? before.id : null;
      return { fileId, imageId: fileId !== null && typeof answer === 'string' ? answer : null };
    },
  };
}

/** The image that is answering: the file itself, or what a launcher exec'd (if still readable); null if unknown. */
function answeredAs(pid: number, name: string, fileId: string): string | null {
  const stat = readStat(pid);
  if (stat === null || !startedNothing(pid, stat.rest)) return null;
  return stat.comm === name ? fileId : imageIdentity(pid);
}

/**
 * Why the native just spawned is not what was checked, or null when it is. `pid` must be unreaped.
 * Only machine code is held to its image; a file not bound (expectFileId null) is not checked.
 */
export function nativeImageMismatch(pid: number, file: CheckedFile | null, expectFileId: string | null, expectImageId: string | null): string | null {
  if (expectFileId === null || file === null || !file.machineCode) return null;
  const image = imageIdentity(pid);
  if (image === expectFileId || (image !== null && image === expectImageId)) return null;
  return image === null ? 'its running image could not be read' : 'it runs another executable than the one whose version was checked';
}

function readStat(pid: number): { comm: string; rest: string[] } | null {
  try {
    const text = process.getBuiltinModule('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = text.lastIndexOf(')');
    return { comm: text.slice(text.indexOf('(') + 1, close), rest: text.slice(close + 2).split(' ') };
  } catch {
    return null;
  }
}

/**
 * True when the process has no child (alive or unreaped, in any of its threads) and never reaped one: its
 * children's page faults and times (fields 11, 13, 16, 17 of /proc/<pid>/stat) count every waited-for
 * child, and every process that ran faults at least once. Unreadable counts as false.
 */
function startedNothing(pid: number, rest: readonly string[]): boolean {
  const fs = process.getBuiltinModule('node:fs');
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      if (fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim() !== '') return false;
    }
  } catch {
    return false;
  }
  // After the command name, field 3 (state) is index 0: cminflt, cmajflt, cutime, cstime.
  return [8, 10, 13, 14].every((i) => rest[i] === '0');
}
