import { createRequire } from 'node:module';

/*
 * Where a process's event loop stalls: a timer that notes every stretch in which the loop took
 * no turn for longer than a threshold, and the garbage collections, both installed in the
 * process through its inspector; then the CPU profile's samples inside those stretches, by the
 * outermost function of ours on their stack (what to break up or shorten).
 */

/**
 * Installed in the process by `evaluate` (its `require` is the inspector's). It ticks every 5 ms:
 * its own CPU counts in the process's (a 1 ms tick cost 53 ms of CPU a second on the busy
 * machine, 3 to 4 ms per request of a one-session cell; 5 ms costs 17), and stalls are noted
 * from 20 ms.
 */
export const STALL_PROBE = `(() => {
  const { PerformanceObserver } = require('node:perf_hooks');
  const { getHeapStatistics } = require('node:v8');
  const { performance } = require('node:perf_hooks');
  const { readFileSync } = require('node:fs');
  const probe = { gaps: [], gc: [], major: [], gcAt: [], heapPeak: 0, last: process.hrtime.bigint(), cpu: 0, ran: 0, waited: 0 };
  // The main thread's time on a core and waiting for one (ns, Linux): a stall the thread spent
  // waiting for a core is the machine's, not the loop's work.
  const sched = () => {
    try {
      return readFileSync('/proc/self/task/' + process.pid + '/schedstat', 'utf8').split(' ').map(Number);
    } catch {
      return [NaN, NaN];
    }
  };
  // A collection's start is on the performance clock; this puts it on the process clock.
  const offset = Number(process.hrtime.bigint()) / 1e6 - performance.now();
  const tick = () => {
    const now = process.hrtime.bigint();
    // With the CPU the process used meanwhile (all threads, ms): a stretch it spent waiting for
    // a core of a busy machine used little.
    const cpu = process.cpuUsage();
    const used = (cpu.user + cpu.system - probe.cpu) / 1000;
    const [ran, waited] = sched();
    if (now - probe.last > 20000000n)
      probe.gaps.push([Number(probe.last / 1000n), Number(now / 1000n), used, (ran - probe.ran) / 1e6, (waited - probe.waited) / 1e6]);
    probe.last = now;
    probe.cpu = cpu.user + cpu.system;
    probe.ran = ran;
    probe.waited = waited;
    setTimeout(tick, 5).unref();
  };
  setTimeout(tick, 5).unref();
  const heap = () => (probe.heapPeak = Math.max(probe.heapPeak, getHeapStatistics().used_heap_size));
  setInterval(heap, 20).unref();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      probe.gc.push(e.duration);
      probe.gcAt.push([e.startTime + offset, e.duration, e.detail?.kind ?? 0]);
      // 4: a full mark-compact of the old generation
      if (e.detail?.kind === 4) probe.major.push(e.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  globalThis.__loopStalls = probe;
  return true;
})()`;

/** Forgets what the probe noted so far. */
export const STALL_RESET =
  '(__loopStalls.gaps = [], __loopStalls.gc = [], __loopStalls.major = [], __loopStalls.gcAt = [], __loopStalls.heapPeak = 0, true)';

/** What the probe noted: the stretches without a loop turn [start, end] in µs, GC pauses in ms. */
export const STALL_READ =
  '({ gaps: __loopStalls.gaps, gc: __loopStalls.gc, major: __loopStalls.major, gcAt: __loopStalls.gcAt, heapPeak: __loopStalls.heapPeak })';

export interface Noted {
  /**
   * [start, end] in µs, then the process's CPU ms in that stretch (all threads), and the ms its
   * main thread ran and waited for a core meanwhile (NaN where /proc does not tell).
   */
  gaps: Array<[number, number, number?, number?, number?]>;
  gc: number[];
  /** The full collections among them. */
  major: number[];
  /** Every collection: its start in ms on the process clock (`process.hrtime`, shared by the
   * processes of one machine), its length in ms and its kind (4: full mark-compact). */
  gcAt: Array<[number, number, number]>;
  /** The most heap in use seen (bytes, sampled every 20 ms). */
  heapPeak: number;
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Our own code: what a stall can be put down to. */
const OURS = /\/(src|machines)\//;

/** Per sample node: the outermost function of ours on its stack and the leaf, else the leaf alone. */
function blamed(profile: CpuProfile): Map<number, string> {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const name = (id: number) => {
    const { functionName, url } = byId.get(id)!.callFrame;
    return `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}`.trim();
  };
  const out = new Map<number, string>();
  for (const n of profile.nodes) {
    let outer: number | undefined;
    for (let at: number | undefined = n.id; at !== undefined; at = parent.get(at))
      if (OURS.test(byId.get(at)!.callFrame.url)) outer = at;
    // The leaf beside it: a decode, an encode or a parse inside our function shows as such.
    out.set(n.id, outer === undefined || outer === n.id ? name(n.id) : `${name(outer)} > ${name(n.id)}`);
  }
  return out;
}

/** The stalls in lines: how many and how long, GC, and what the samples inside them ran. */
export function stallReport(profile: CpuProfile, noted: Noted, top = 12): string[] {
  const blame = blamed(profile);
  const by = new Map<string, number>();
  let t = profile.startTime;
  const times = profile.timeDeltas.map((d) => (t += d));
  const gaps = [...noted.gaps].sort((a, b) => a[0] - b[0]);
  let g = 0;
  let inside = 0;
  for (let i = 0; i < times.length - 1; i++) {
    while (g < gaps.length && gaps[g]![1] < times[i]!) g++;
    if (g === gaps.length || times[i]! < gaps[g]![0]) continue;
    const ms = (times[i + 1]! - times[i]!) / 1000;
    const who = blame.get(profile.samples[i]!)!;
    by.set(who, (by.get(who) ?? 0) + ms);
    inside += ms;
  }
  const lengths = gaps.map(([a, b]) => (b - a) / 1000).sort((a, b) => b - a);
  const round = (n: number) => Math.round(n);
  return [
    `${gaps.length} stretches of 20 ms or more without a loop turn, ${round(lengths.reduce((a, b) => a + b, 0))} ms in all, the longest ${lengths.slice(0, 5).map(round).join(', ')} ms`,
    `GC: ${noted.gc.length} pauses, ${round(noted.gc.reduce((a, b) => a + b, 0))} ms, the longest ${round(Math.max(0, ...noted.gc))} ms`,
    `sampled inside them (${round(inside)} ms), by the outermost function of ours on the stack > the function running:`,
    ...[...by]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([who, ms]) => `  ${String(round(ms)).padStart(6)} ms ${who}`),
  ];
}

/**
 * The same probe in this process: the bench's own client and fake upstream share one loop,
 * and a stall there lengthens the times of every path it measures, direct included.
 */
export function watchThisProcess(): { reset: () => void; read: () => Noted } {
  new Function('require', `return ${STALL_PROBE}`)(createRequire(import.meta.url));
  const run = (code: string) => new Function(`return ${code}`)() as unknown;
  return { reset: () => run(STALL_RESET), read: () => run(STALL_READ) as Noted };
}
