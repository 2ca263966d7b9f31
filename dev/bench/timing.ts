/** Milliseconds since an arbitrary origin, sub-millisecond resolution. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Median of a list of numbers (the list is copied, not sorted in place). */
export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Peak resident set size of this process so far, in MB (Linux reports maxRSS in KB). */
export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/**
 * CPU time of this process so far (ms): user and system time of all its threads (the thread
 * pool's fsync and the garbage collector's helpers included), which a busy machine does not
 * inflate as it does wall time.
 */
export function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
