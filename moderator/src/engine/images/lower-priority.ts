import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import os from 'node:os';

/** How a process's threads are scheduled: `idle` (SCHED_IDLE), `nice` (nice 19), or `unchanged`. */
export type ProcessScheduling = 'idle' | 'nice' | 'unchanged';

/**
 * Lowers every thread of this process, and so the threads they start later (a new thread takes its creator's policy
 * and nice value): V8's platform threads (garbage collection, WebAssembly compilation), libuv's thread pool (sharp's
 * work) and libvips' threads as well as the JavaScript threads. `idle`: Linux's SCHED_IDLE, set with util-linux's
 * `chrt --all-tasks`; the threads then run only on CPU time no other thread of the machine wants. Where that cannot
 * be set (not Linux, no `chrt`), each thread gets nice 19.
 */
export function lowerPriority(idle: boolean): ProcessScheduling {
  if (process.platform !== 'linux') return niceAll();
  if (idle) {
    try {
      execFileSync('chrt', ['--all-tasks', '--idle', '--pid', '0', String(process.pid)], {
        stdio: 'ignore',
        timeout: 5000,
      });
      return 'idle';
    } catch {
      // no chrt: nice 19 below
    }
  }
  return niceAll();
}

/** Nice 19 for each thread (Linux applies setpriority to one thread, by its id), or the process elsewhere. */
function niceAll(): ProcessScheduling {
  try {
    const threads = process.platform === 'linux' ? readdirSync('/proc/self/task').map(Number) : [process.pid];
    for (const tid of threads) os.setPriority(tid, 19);
    return 'nice';
  } catch {
    return 'unchanged';
  }
}
