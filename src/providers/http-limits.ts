import { z } from 'zod';

/**
 * Time limits of provider calls: how long one request may take, how many attempts one call
 * gets and how long all of them together may take. A hung provider used to block for about
 * 40 minutes (600 s × 4 attempts); with these defaults one call ends within 300 s.
 */
export const HTTP_DEFAULTS = {
  /** One request (headers and body). */
  timeoutMs: 120_000,
  /** Retries after the first attempt. */
  retries: 3,
  /** Wall time of one call: every attempt and every wait between attempts. */
  retryBudgetMs: 300_000,
  minRetryDelayMs: 500,
  maxRetryDelayMs: 8_000,
  /** Cap on a server-requested `retry-after` wait. */
  retryAfterCapMs: 60_000,
  /** How often `onWaiting` hears about a request still in flight. */
  progressIntervalMs: 15_000,
} as const;

/** What `onWaiting` is told while a request is in flight. */
export interface WaitingInfo {
  provider: string;
  model: string;
  /** 1-based attempt number and the most attempts this call may make. */
  attempt: number;
  attempts: number;
  /** Since the call's first attempt started. */
  elapsedMs: number;
}

/** The limits a call runs under (what reports print). */
export interface HttpLimits {
  timeoutMs: number;
  retries: number;
  retryBudgetMs: number;
}

const ms = (max: number) => z.number().int().positive().max(max);

/** zod shape of the plain-number HTTP options (config `http` and the library's `http`). */
export const HTTP_LIMITS_SHAPE = {
  timeoutMs: ms(86_400_000).optional(),
  retries: z.number().int().nonnegative().max(20).optional(),
  retryBudgetMs: ms(86_400_000).optional(),
};

const fn = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', 'expected a function');

/** zod schema of the library option `http` (numbers bounded, callbacks functions, no unknown keys). */
export const HttpOptionsSchema = z.strictObject({
  ...HTTP_LIMITS_SHAPE,
  minRetryDelayMs: z.number().int().nonnegative().optional(),
  maxRetryDelayMs: z.number().int().nonnegative().optional(),
  retryAfterCapMs: z.number().int().nonnegative().optional(),
  progressIntervalMs: ms(86_400_000).optional(),
  dispatcher: z
    .custom((v) => typeof v === 'object' && v !== null, 'expected an undici dispatcher')
    .optional(),
  onRetry: fn.optional(),
  onWaiting: fn.optional(),
});

/** The limits in force for `opts` (defaults filled in). */
export function httpLimits(opts: Partial<HttpLimits> = {}): HttpLimits {
  return {
    timeoutMs: opts.timeoutMs ?? HTTP_DEFAULTS.timeoutMs,
    retries: opts.retries ?? HTTP_DEFAULTS.retries,
    retryBudgetMs: opts.retryBudgetMs ?? HTTP_DEFAULTS.retryBudgetMs,
  };
}

/**
 * Calls `report` every `intervalMs` until the returned stop function runs (a request in
 * flight). The timer never keeps the process alive on its own.
 */
export function startWaitingTicker(intervalMs: number, report: () => void): () => void {
  const timer = setInterval(report, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** `120 s`, `1.5 s` or `100 ms`: durations in messages people read. */
export function spokenDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}
