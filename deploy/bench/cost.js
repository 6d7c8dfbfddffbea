'use strict';
// What a record costs: CPU milliseconds by process (this benchmark's own children: the services, FerretDB, PostgreSQL
// and Kafka) from /proc, and store commands by service from each service's <service>_store_commands_total.
const fs = require('node:fs');
const { waitUntil } = require('../local/util');

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

/** pid → { ppid, cpuMs, comm, cmdline } of every process readable in /proc. */
function processTable() {
  const table = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      table.set(Number(entry), {
        ppid: Number(fields[1]),
        // Its own time (utime, stime) and that of its children which ended and were waited for (cutime, cstime): the
        // PostgreSQL backends and autovacuum workers that exit count in their postmaster's total.
        cpuMs:
          ((Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_S,
        comm,
        cmdline,
      });
    } catch {
      // the process ended while being read
    }
  }
  return table;
}

/**
 * CPU milliseconds used so far by this process's descendants, by part: `gateway`, `moderator`, `notifier` (pids from
 * the stack), `ferretdb`, `postgres` (every backend), `kafka`. A process that exited counts in its parent's total once
 * reaped (a PostgreSQL backend in the postmaster's), so a part's total never goes down; take both snapshots while the
 * stack runs.
 */
function cpuSnapshot(stack) {
  const table = processTable();
  const children = new Map();
  for (const [pid, proc] of table) {
    if (!children.has(proc.ppid)) children.set(proc.ppid, []);
    children.get(proc.ppid).push(pid);
  }
  // Replicas (`moderator-2`, …) count in their service's part.
  const byService = new Map(Object.entries(stack.pids).map(([name, pid]) => [pid, serviceOf(name)]));
  const totals = { gateway: 0, moderator: 0, notifier: 0, ferretdb: 0, postgres: 0, kafka: 0 };
  const queue = [process.pid];
  while (queue.length > 0) {
    const pid = queue.shift();
    for (const child of children.get(pid) ?? []) queue.push(child);
    if (pid === process.pid) continue;
    const proc = table.get(pid);
    if (!proc) continue;
    const part =
      byService.get(pid) ??
      (proc.comm === 'postgres' || proc.cmdline.startsWith('postgres')
        ? 'postgres'
        : proc.cmdline.includes('ferretdb')
          ? 'ferretdb'
          : proc.cmdline.includes('kafka.Kafka')
            ? 'kafka'
            : undefined);
    if (part) totals[part] += proc.cpuMs;
  }
  return totals;
}

/** The service a process of the stack belongs to: `moderator-2` is a replica of `moderator`. */
const serviceOf = (name) => name.replace(/-\d+$/, '');

/**
 * `<service>_store_commands_total` for each service with an admin port (its replicas' summed): in all (`counts`) and
 * by `service command collection` (`detail`). A replica restarted since the first snapshot starts its count again:
 * compare snapshots between restarts.
 */
async function storeCommandsDetailed(stack) {
  const counts = {};
  const detail = {};
  for (const [name, port] of Object.entries(stack.adminPorts)) {
    const service = serviceOf(name);
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    let total = 0;
    for (const match of text.matchAll(new RegExp(`^${service}_store_commands_total\\{([^}]*)\\} (\\d+)`, 'gm'))) {
      const count = Number(match[2]);
      total += count;
      const labels = Object.fromEntries([...(match[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      const key = `${service} ${labels.command ?? '?'} ${labels.collection || '-'}`;
      detail[key] = (detail[key] ?? 0) + count;
    }
    counts[service] = (counts[service] ?? 0) + total;
  }
  return { counts, detail };
}

/** A snapshot of both, to subtract with `costPer` (and `commandDetail`, for where the commands went). */
async function costSnapshot(stack) {
  const { counts, detail } = await storeCommandsDetailed(stack);
  return { cpu: cpuSnapshot(stack), commands: counts, detail };
}

/**
 * Where the store commands between two snapshots went, per record: `service command collection n`, most first, the
 * `top` largest.
 */
function commandDetail(before, after, records, top = 20) {
  /** @type {Array<{ key: string, perRecord: number }>} */
  const rows = Object.entries(after.detail).map(([key, count]) => ({
    key,
    perRecord: (count - (before.detail[key] ?? 0)) / Math.max(1, records),
  }));
  return rows
    .filter((row) => row.perRecord >= 0.005)
    .sort((a, b) => b.perRecord - a.perRecord)
    .slice(0, top)
    .map((row) => `${row.key} ${row.perRecord.toFixed(2)}`)
    .join('; ');
}

/** The difference between two snapshots, per record: CPU ms by process and store commands by service. */
function costPer(before, after, records) {
  const per = (a, b) =>
    Object.fromEntries(Object.keys(b).map((key) => [key, (b[key] - (a[key] ?? 0)) / Math.max(1, records)]));
  const cpu = per(before.cpu, after.cpu);
  const commands = per(before.commands, after.commands);
  const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);
  return { cpu, commands, cpuTotal: sum(cpu), commandsTotal: sum(commands) };
}

/** One line per figure: `label: total (part x, part y, …)`. */
function formatCost(cost) {
  const parts = (o, digits) =>
    Object.entries(o)
      .map(([key, value]) => `${key} ${value.toFixed(digits)}`)
      .join(', ');
  return (
    `CPU ${cost.cpuTotal.toFixed(1)} ms (${parts(cost.cpu, 1)}); ` +
    `store commands ${cost.commandsTotal.toFixed(1)} (${parts(cost.commands, 1)})`
  );
}

/** Share of one core the stack used between two CPU snapshots `ms` apart. */
function coresUsed(before, after, ms) {
  const used = Object.keys(after).reduce((sum, key) => sum + after[key] - (before[key] ?? 0), 0);
  return used / ms;
}

/**
 * Waits until what `cpuMs` reads (CPU milliseconds used so far) grows by less than `maxCores` cores over a window of
 * `windowMs`, at most 2 min: the window is the measurement, a use of CPU over time.
 * @param {() => number} cpuMs
 * @param {{ windowMs: number; maxCores: number; what: string }} options
 */
function untilIdle(cpuMs, { windowMs, maxCores, what }) {
  return waitUntil(
    async () => {
      const before = cpuMs();
      await new Promise((resolve) => setTimeout(resolve, windowMs));
      return (cpuMs() - before) / windowMs < maxCores;
    },
    { timeoutMs: 120000, what },
  );
}

/** Waits until the stack uses under a quarter of a core (the work an earlier phase left is done), at most 2 min. */
async function quiet(stack) {
  const cpuMs = () => coresUsed({}, cpuSnapshot(stack), 1);
  await untilIdle(cpuMs, { windowMs: 2000, maxCores: 0.25, what: 'the stack to go quiet' }).catch(() => undefined);
}

/**
 * What the stack costs with no traffic over `seconds`: the cores it used (in all and by process) and the store commands
 * it made per second (in all and by service): polls, sweeps and cache refreshes that run whether records come or not.
 */
async function idleCost(stack, seconds) {
  const before = await costSnapshot(stack);
  const started = Date.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = await costSnapshot(stack);
  const ms = Date.now() - started;
  const perSecond = (a, b, scale) =>
    Object.fromEntries(Object.keys(b).map((key) => [key, ((b[key] - (a[key] ?? 0)) * scale) / ms]));
  const shares = perSecond(before.cpu, after.cpu, 1);
  const commands = perSecond(before.commands, after.commands, 1000);
  const detail = commandDetail(before, after, ms / 1000);
  const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);
  const parts = (o, format) =>
    Object.entries(o)
      .map(([key, value]) => `${key} ${format(value)}`)
      .join(', ');
  return {
    cores: sum(shares),
    shares,
    commandsPerS: sum(commands),
    commands,
    parts: parts(shares, (share) => `${(100 * share).toFixed(1)}%`),
    text:
      `${(100 * sum(shares)).toFixed(1)}% of a core (${parts(shares, (share) => `${(100 * share).toFixed(1)}%`)}); ` +
      `${sum(commands).toFixed(1)} store commands/s (${parts(commands, (n) => n.toFixed(1))}${detail ? `: ${detail}` : ''})`,
  };
}

module.exports = {
  cpuSnapshot,
  costSnapshot,
  costPer,
  commandDetail,
  formatCost,
  coresUsed,
  quiet,
  untilIdle,
  idleCost,
};
