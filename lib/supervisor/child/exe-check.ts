/**
 * Binds a version answer to the executable image that gave it, and the run to that image, from what the
 * kernel shows in /proc (identities as lib/supervisor/file-id.ts defines them).
 *
 * Machine code (ELF) is exec'd from the file the supervisor opened and identified, through a private
 * symlink to /proc/<supervisor>/fd/<fd>: whatever the path names by then, exec runs that inode. The probe's
 * link has a random 15-character name, argv[0] still the file's path: the kernel names a process after
 * the last path it exec'd (`comm`, field 2 of /proc/<pid>/stat), so any later exec renames it. When the
 * probe's answer arrives on stdout, the child still unreaped (alive or a zombie: /proc/<pid>/stat stays
 * readable until Node reaps it, which it does after the data already read is handled), it answered itself
 * if it still bears that name (it exec'd nothing) and it started no process (none listed as its child,
 * none reaped by it). A launcher that exec'd another binary (mise's shims) is renamed, and the image that
 * answered is then that binary if it can still be read; one that forked and waited (volta's) shows its
 * child. What cannot be read is bound to no image.
 * The native: right after spawn its image must be the checked file, or the binary the probe's launcher
 * exec'd; anything else is killed at once. A script's image is its interpreter, which says nothing about
 * the script, and the interpreter opens the script by path after it starts: a script is held to its file
 * identity before spawn only (docs/supervisor.md states what remains).
 */
import type { ChildProcess } from 'node:child_process';
import { hasChildren, readProcStatLine } from '../../process/proc-table.ts';
import { fileIdentity } from '../file-id.ts';
import type { VersionProof } from '../protocol.ts';

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
  /** The name exec gives the process (the link's), or null when it is run by its path (no private link). */
  readonly execName: string | null;
  release(): void;
}

/**
 * Opens and identifies `path` (identity and kind read from the one open file); null when it cannot. Only on
 * Linux (`viaProc`) is machine code exec'd through /proc/<supervisor>/fd; elsewhere everything runs by its
 * path, bound to the identity fstat read here.
 */
export function pinFile(
  path: string,
  name: string = process.getBuiltinModule('node:path').basename(path),
  viaProc = true,
): PinnedFile | null {
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
    if (!machineCode || !viaProc) {
      release();
      return { id, machineCode, execPath: path, execName: null, release };
    }
    try {
      dir = fs.mkdtempSync(join(process.getBuiltinModule('node:os').tmpdir(), 'claude-run-mcp-exec-'));
      fs.symlinkSync(`/proc/${process.pid}/fd/${fd}`, join(dir, name));
      return { id, machineCode, execPath: join(dir, name), execName: name, release };
    } catch {
      // No private directory (a read-only tmp): run by path; the image check after spawn still holds.
      release();
      return { id, machineCode, execPath: path, execName: null, release };
    }
  } catch {
    release();
    return null;
  }
}
/** The first four bytes of every ELF file: exec runs such a file itself, not an interpreter it names. */
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
 * Watches a probe just spawned from `path` through `pinned`: what answered, at each stdout chunk. Call it
 * synchronously after spawn, before the event loop can reap the child.
 */
export function watchProbe(child: ChildProcess, path: string, pinned: PinnedFile | null, viaProc = true): ProbeWatch {
  const pid = child.pid;
  if (pid === undefined || pinned === null) return UNBOUND_PROBE;
  const before = pinned;
  // A script starts as its interpreter, whose image says nothing about the script: bound to no image. Without
  // /proc no image can be read at all: the answer is bound to the file only.
  let answer: string | null | undefined = before.machineCode && viaProc ? undefined : null;
  child.stdout?.on('data', () => {
    if (answer === null) return;
    // Once Node reaped the child its pid may be another process's; until then /proc/<pid> is the probe.
    const unreaped = child.exitCode === null && child.signalCode === null;
    const image = unreaped ? answeredAs(pid, before.execName, before.id) : null;
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

/**
 * The image that is answering, alone: the file itself while the process still bears the name it was
 * exec'd by (even as a zombie), else what /proc/<pid>/exe shows if it can still be read; null if unknown.
 */
function answeredAs(pid: number, name: string | null, fileId: string): string | null {
  const stat = readProcStatLine(pid);
  if (stat === null || !startedNothing(pid)) return null;
  return name !== null && stat.comm === name ? fileId : imageIdentity(pid);
}

/**
 * Why the native just spawned is not what was checked, or null when it is. `pid` must be unreaped.
 * Only machine code is held to its image; a file not bound (expectFileId null) is not checked.
 */
export function nativeImageMismatch(
  pid: number,
  file: (CheckedFile & { readonly execName?: string | null }) | null,
  expectFileId: string | null,
  expectImageId: string | null,
): string | null {
  if (expectFileId === null || file === null || !file.machineCode) return null;
  const image = imageIdentity(pid);
  if (image === expectFileId || (image !== null && image === expectImageId)) return null;
  if (image !== null) return 'it runs another executable than the one whose version was checked';
  // A native that exited before its image could be read (a zombie has none): exec'd through the pinned link it
  // ran the checked inode, and it still bears the link's name unless it exec'd another file since.
  const stat = readProcStatLine(pid);
  if (stat?.fields[0] === 'Z' && file.execName != null && stat.comm === file.execName) return null;
  return stat?.fields[0] === 'Z'
    ? "it exited before its image could be read, under another file's name"
    : 'its running image could not be read';
}

/**
 * What the run's version check binds the native just spawned (unreaped, not refused) to, as
 * VersionProof says. Only Linux (`viaProc`) reads an image; a script or any file elsewhere is bound by its
 * identity, read from the path again right after the spawn.
 */
export function versionProofOf(
  pid: number,
  path: string,
  file: (CheckedFile & { readonly execName?: string | null }) | null,
  expect: { readonly fileId: string | null; readonly imageId: string | null },
  viaProc: boolean,
): VersionProof {
  if (expect.fileId === null || file === null || file.id !== expect.fileId) return 'path';
  if (viaProc && file.machineCode && expect.imageId !== null) {
    const image = imageIdentity(pid);
    if (image !== null && image === expect.imageId) return 'image';
    // Exited already (no image): it ran the pinned inode if it still bears the link's name.
    const stat = image === null ? readProcStatLine(pid) : null;
    if (stat?.fields[0] === 'Z' && file.execName != null && stat.comm === file.execName && expect.imageId === expect.fileId) return 'image';
  }
  return fileIdentity(path) === expect.fileId ? 'file' : 'path';
}

/**
 * True when the process has no child (alive or unreaped, in any of its threads) and never reaped one: its
 * children's page faults and times (fields 11, 13, 16, 17 of /proc/<pid>/stat) count every waited-for
 * child, and every process that ran faults at least once. The lists are read before the counts: a child
 * reaped in between is in the counts, one reaped after is still listed (a shim that forked and waited was
 * once taken for its own answer when the counts came from a read before its child was reaped). Unreadable
 * counts as false.
 */
function startedNothing(pid: number): boolean {
  if (hasChildren(pid) !== false) return false;
  const stat = readProcStatLine(pid);
  // After the command name, field 3 (state) is index 0: cminflt, cmajflt, cutime, cstime.
  return stat !== null && [8, 10, 13, 14].every((i) => stat.fields[i] === '0');
}
