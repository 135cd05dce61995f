// CPU time spent by each process of this benchmark's tree, by role, read from /proc: where a
// GiB's upload costs CPU (the page's renderer, Chromium's network service and browser process,
// Garage, ferry, boto3). Only descendants of this driver count, so other work on a shared
// machine (other Chromiums, other Garages) is left out. On two busy cores CPU is time, so this
// says whose work the distance between peers is. Linux only; elsewhere it reports nothing.
import { readdir, readFile } from 'node:fs/promises';

export type Role = 'renderer' | 'network' | 'browser' | 'chromium-other' | 'garage' | 'ferry' | 'python' | 'other';
/** CPU seconds (user + system) by process id, with each process's role. */
export type CpuSample = Map<number, { role: Role; seconds: number }>;

const TICKS = 100; // USER_HZ on Linux

/** By the program's name (argv[0]): other arguments may name the others (ferry's `--s3-region garage`). */
function roleOf(cmdline: string): Role {
  const program = cmdline.split('\0')[0]?.split('/').pop() ?? '';
  if (/chrom/i.test(program)) {
    if (cmdline.includes('--type=renderer')) return 'renderer';
    if (cmdline.includes('network.mojom.NetworkService')) return 'network';
    return cmdline.includes('--type=') ? 'chromium-other' : 'browser';
  }
  if (program.startsWith('garage') || program === 'ferry-garage') return 'garage';
  if (program === 'ferry') return 'ferry';
  if (program.startsWith('python')) return 'python';
  return 'other';
}

/** Every descendant of `root` (not `root` itself) and its CPU seconds so far. */
export async function sampleCpu(root = process.pid): Promise<CpuSample> {
  const parent = new Map<number, number>();
  const stat = new Map<number, string[]>();
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p));
  } catch {
    return new Map();
  }
  for (const p of pids) {
    try {
      const text = await readFile(`/proc/${p}/stat`, 'utf8');
      // Fields after the command name, which may hold spaces: state is field 3, ppid 4, utime 14, stime 15.
      const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(p), Number(rest[1]));
      stat.set(Number(p), rest);
    } catch {
      // exited meanwhile
    }
  }
  const out: CpuSample = new Map();
  for (const [pid, rest] of stat) {
    let up = parent.get(pid);
    while (up !== undefined && up !== root && up > 1) up = parent.get(up);
    if (up !== root) continue;
    let cmdline = '';
    try {
      cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    out.set(pid, { role: roleOf(cmdline), seconds: (Number(rest[11]) + Number(rest[12])) / TICKS });
  }
  return out;
}

/**
 * CPU seconds by role between two samples (a process new in `after` counts from zero); `extra`
 * adds what exited meanwhile and reported its own time (native.py's boto3).
 */
export function cpuBetween(
  before: CpuSample,
  after: CpuSample,
  extra: Partial<Record<Role, number>> = {},
): Partial<Record<Role, number>> {
  const out: Partial<Record<Role, number>> = { ...extra };
  for (const [pid, { role, seconds }] of after) {
    const spent = seconds - (before.get(pid)?.seconds ?? 0);
    out[role] = Number(((out[role] ?? 0) + spent).toFixed(2));
  }
  return out;
}
