/**
 * Processes as Linux's /proc shows them: a process's descendants now, whether one of them is still
 * alive (a zombie is not; a pid reused since is another process), and every process that carries
 * an environment variable, which finds a descendant even once its parent died and left it to init.
 */
import fs from 'node:fs';

export interface ProcessSeen {
  pid: number;
  /** The process's start time, which tells it from a later process given the same pid. */
  startedAt: string;
  command: string;
}

/** State and start time (fields 3 and 22 of /proc/PID/stat), or undefined once it is gone. */
function stat(pid: number): { state: string; startedAt: string } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command's name, in parentheses, may hold spaces: the fields count from after it.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0], startedAt: fields[19] };
}

function seen(pid: number): ProcessSeen | undefined {
  const now = stat(pid);
  if (!now) return undefined;
  let command = '';
  try {
    command = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    // Gone meanwhile: still listed, isAlive says the rest.
  }
  return { pid, startedAt: now.startedAt, command };
}

function childrenOf(pid: number): number[] {
  try {
    return fs
      .readdirSync(`/proc/${pid}/task`)
      .flatMap((thread) =>
        fs.readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8').split(' '),
      )
      .filter((entry) => entry !== '')
      .map(Number);
  } catch {
    return [];
  }
}

/** The process and every descendant it has now. */
export function processTree(pid: number): ProcessSeen[] {
  const found: ProcessSeen[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    const next = pending.shift()!;
    const proc = seen(next);
    if (!proc) continue;
    found.push(proc);
    pending.push(...childrenOf(next));
  }
  return found;
}

export function isAlive(proc: ProcessSeen): boolean {
  const now = stat(proc.pid);
  return now !== undefined && now.startedAt === proc.startedAt && !['Z', 'X'].includes(now.state);
}

/** Every living process (of this user: others' environments cannot be read) with `name=value` in its environment. */
export function processesWithVariable(name: string, value: string): ProcessSeen[] {
  const entry = `${name}=${value}`;
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((pid) => {
      try {
        if (!fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(entry)) return [];
      } catch {
        return [];
      }
      const proc = seen(Number(pid));
      return proc && isAlive(proc) ? [proc] : [];
    });
}
