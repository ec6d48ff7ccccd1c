// A memory limit for a benchmarked process, as its container would have it. Node sizes V8's heap
// (its old generation and the young generation's semi-spaces) from the memory it may use: the
// machine's, or the cgroup limit it runs under (process.constrainedMemory()). On a 24 GB machine
// without a limit V8 grows its heap far beyond what the same service does in a 512 MiB container,
// so a memory row measured without the limit measures the machine, not the service.
//
// Hand-written: no npm package creates cgroups; this is the kernel's documented file interface
// (cgroup v2's memory.max, or v1's memory.limit_in_bytes), and it needs root. Where neither can be
// written, `memoryLimit` returns undefined and the report says the row ran without it.
import { mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { composeService } from '@nhp/shared-testing';

export interface MemoryLimit {
  bytes: number;
  /** Prefix of a command: the process it execs starts inside the limit, with the same pid. */
  prefix: string[];
  describe: string;
  dispose(): void;
}

/**
 * The memory limit docker-compose.yml gives `service` (`mem_limit`, e.g. `512m`), in bytes: what
 * the bench runs that service with, so that the two cannot drift apart.
 */
export function deployedMemoryLimit(service: string): number {
  const limit = String(composeService(service)?.mem_limit ?? '');
  const match = /^(\d+)([kmg]?)$/i.exec(limit);
  if (!match) throw new Error(`docker-compose.yml: no mem_limit like 512m for ${service}`);
  const unit = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 }[(match[2] ?? '').toLowerCase()] ?? 1;
  return Number(match[1]) * unit;
}

const CGROUP_V2 = '/sys/fs/cgroup';
const CGROUP_V1_MEMORY = '/sys/fs/cgroup/memory';

export function memoryLimit(name: string, bytes: number): MemoryLimit | undefined {
  const group = `nhp-bench-${name}-${process.pid}`;
  const candidates = [
    { dir: join(CGROUP_V1_MEMORY, group), limitFile: 'memory.limit_in_bytes' },
    { dir: join(CGROUP_V2, group), limitFile: 'memory.max' },
  ];
  for (const { dir, limitFile } of candidates) {
    try {
      mkdirSync(dir);
    } catch {
      continue;
    }
    try {
      writeFileSync(join(dir, limitFile), String(bytes));
    } catch {
      rmdirSync(dir);
      continue;
    }
    const procs = join(dir, 'cgroup.procs');
    return {
      bytes,
      // sh puts itself into the group, then execs the command (same pid, so taskset's and the
      // bench's bookkeeping of the pid hold).
      prefix: ['sh', '-c', `echo $$ > ${procs} && exec "$@"`, 'sh'],
      describe: `${Math.round(bytes / 2 ** 20)} MiB memory limit (cgroup ${dir})`,
      dispose: () => {
        try {
          rmdirSync(dir);
        } catch {
          // Still has a process (the bench stopped before it): the kernel keeps the group.
        }
      },
    };
  }
  return undefined;
}
