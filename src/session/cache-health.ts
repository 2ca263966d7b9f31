import { z } from 'zod';
import { parseOptions } from '../core/parse-options.js';

/**
 * The prompt-cache health monitor. It watches how much of each request's input the
 * provider served from its prompt cache, keeps a streak of consecutive low-reuse requests
 * and raises an alert when the streak gets long. A successful compaction (manual,
 * automatic, recovery, targeted, model switch) resets ONLY the streak — the compaction is
 * what invalidated the cache, so misses before it must not add up with the expected
 * misses after it. Failures and no-op passes reset nothing; totals and alerts stay.
 */

/** Tuning of {@link createCacheHealthMonitor}. */
export interface CacheHealthOptions {
  /** A request whose cached share of input is below this counts as low reuse (default 0.5). */
  lowReuseRatio?: number;
  /** Requests with fewer input tokens are ignored: providers do not cache short prompts (default 1,024). */
  minInputTokens?: number;
  /** An alert fires when the streak reaches this length (default 3). */
  alertAfter?: number;
}

const CacheHealthOptionsSchema = z.strictObject({
  lowReuseRatio: z.number().gt(0).lte(1).optional(),
  minInputTokens: z.number().int().nonnegative().optional(),
  alertAfter: z.number().int().positive().optional(),
});

/** One request's usage as the provider reported it. */
export interface CacheUsage {
  inputTokens: number;
  cachedInputTokens?: number;
}

const CacheUsageSchema = z.strictObject({
  inputTokens: z.number().int().nonnegative(),
  cachedInputTokens: z.number().int().nonnegative().optional(),
});

/** A raised low-reuse alert (kept for the whole session). */
export interface CacheAlert {
  /** 1-based index of the request that raised it. */
  request: number;
  /** Streak length when it fired. */
  streak: number;
  /** Cached share of that request's input. */
  reuseRatio: number;
}

/** What the monitor knows. */
export interface CacheHealthState {
  requests: number;
  totalInputTokens: number;
  totalCachedInputTokens: number;
  /** Consecutive low-reuse requests (reset by a good request or a successful compaction). */
  lowReuseStreak: number;
  /** Every alert raised so far, oldest first (never cleared). */
  alerts: readonly CacheAlert[];
}

/** Result of one {@link CacheHealthMonitor.recordUsage} call. */
export interface CacheUsageVerdict {
  /** Cached share of this request's input (0 when it had no input). */
  reuseRatio: number;
  /** Whether this request counted as low reuse. */
  lowReuse: boolean;
  lowReuseStreak: number;
  /** The alert this request raised, if any. */
  alert: CacheAlert | null;
}

/** What happened to a compaction pass, as the monitor sees it. */
export type CompactionOutcome = 'compacted' | 'unchanged' | 'failed';

/** The monitor. */
export interface CacheHealthMonitor {
  /** Records one request's usage; throws on negative or non-integer counts. */
  recordUsage(usage: CacheUsage): CacheUsageVerdict;
  /** Only `compacted` resets the low-reuse streak; `unchanged` and `failed` change nothing. */
  onCompaction(outcome: CompactionOutcome): void;
  /** A copy of the current state. */
  state(): CacheHealthState;
}

/** Creates a {@link CacheHealthMonitor}. */
export function createCacheHealthMonitor(options: CacheHealthOptions = {}): CacheHealthMonitor {
  const o = parseOptions(CacheHealthOptionsSchema, options, 'cacheHealth');
  const lowReuseRatio = o.lowReuseRatio ?? 0.5;
  const minInputTokens = o.minInputTokens ?? 1_024;
  const alertAfter = o.alertAfter ?? 3;
  const s = { requests: 0, totalInputTokens: 0, totalCachedInputTokens: 0, lowReuseStreak: 0 };
  const alerts: CacheAlert[] = [];

  return {
    recordUsage(usage) {
      const u = parseOptions(CacheUsageSchema, usage, 'recordUsage: usage');
      // A provider never caches more than it was sent; clamp odd reports instead of trusting them.
      const cached = Math.min(u.cachedInputTokens ?? 0, u.inputTokens);
      s.requests++;
      s.totalInputTokens += u.inputTokens;
      s.totalCachedInputTokens += cached;
      const reuseRatio = u.inputTokens === 0 ? 0 : cached / u.inputTokens;
      const lowReuse = u.inputTokens >= minInputTokens && reuseRatio < lowReuseRatio;
      s.lowReuseStreak = lowReuse ? s.lowReuseStreak + 1 : 0;
      let alert: CacheAlert | null = null;
      if (lowReuse && s.lowReuseStreak === alertAfter) {
        alert = { request: s.requests, streak: s.lowReuseStreak, reuseRatio };
        alerts.push(alert);
      }
      return { reuseRatio, lowReuse, lowReuseStreak: s.lowReuseStreak, alert };
    },
    onCompaction(outcome) {
      if (outcome === 'compacted') s.lowReuseStreak = 0;
    },
    state: () => ({ ...s, alerts: alerts.slice() }),
  };
}
