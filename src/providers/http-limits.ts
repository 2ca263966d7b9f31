import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { defaultsOf, flagValue, settingsGroup, type SettingsOf } from '../core/settings.js';

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

/**
 * Time limits of provider calls: how long one request may take, how many attempts one call
 * gets and how long all of them together may take. A hung provider used to block for about
 * 40 minutes (600 s × 4 attempts); with these defaults one call ends within 300 s.
 */
const ms = (max: number) => z.number().int().positive().max(max);
const DAY_MS = 86_400_000;
const fn = <F extends (...args: never[]) => unknown>() =>
  z.custom<F>((v) => typeof v === 'function', 'expected a function');

/** The provider call settings, one row each: the library's `http` option, config `http`, the flags. */
export const HTTP_SETTINGS = {
  timeoutMs: {
    schema: ms(DAY_MS),
    default: 120_000,
    doc: 'One provider request (headers and body) may take this many milliseconds.',
    flag: {
      name: 'timeout',
      arg: 'SECONDS',
      parse: flagValue.secondsAsMs,
      help: 'one provider request may take this long (default 120)',
    },
  },
  retries: {
    schema: z.number().int().nonnegative().max(20, 'at most 20'),
    default: 3,
    doc: 'Retries of a failed request after the first attempt: `run` retries timeouts, resets, 429 and 5xx; `serve` only a request the provider refused (408, 429, 503, 529) or never received.',
    flag: {
      name: 'retries',
      arg: 'N',
      parse: flagValue.nonNegInt,
      help: 'retries of a failed request (default 3): run retries timeouts, resets, 429, 5xx; serve only one the provider refused or never received',
    },
  },
  retryBudgetMs: {
    schema: ms(DAY_MS),
    default: 300_000,
    doc: 'Wall time of one call in milliseconds: every attempt and every wait between attempts.',
    flag: {
      name: 'retry-budget',
      arg: 'SECONDS',
      parse: flagValue.secondsAsMs,
      help: 'all attempts of one provider call together, waits included (default 300); while waiting, stderr gets a line every 15 s when it is not a terminal',
    },
  },
  minRetryDelayMs: {
    schema: z.number().int().nonnegative(),
    default: 500,
    doc: 'First wait between attempts, in milliseconds.',
  },
  maxRetryDelayMs: {
    schema: z.number().int().nonnegative(),
    default: 8_000,
    doc: 'Longest wait between attempts, in milliseconds.',
  },
  retryAfterCapMs: {
    schema: z.number().int().nonnegative(),
    default: 60_000,
    doc: 'Cap on a server-requested `retry-after` wait, in milliseconds.',
  },
  progressIntervalMs: {
    schema: ms(DAY_MS),
    default: 15_000,
    doc: 'How often `onWaiting` hears about a request still in flight, in milliseconds.',
  },
  dispatcher: {
    schema: z.custom<Dispatcher>((v) => typeof v === 'object' && v !== null, 'expected an undici dispatcher'),
    defaultText: 'the global one',
    doc: 'undici dispatcher (agent or proxy) for provider requests.',
    libraryOnly: true,
  },
  onRetry: {
    schema: fn<(note: string) => void>(),
    doc: 'Called once per failed attempt with a redacted one-line note.',
    libraryOnly: true,
  },
  onWaiting: {
    schema: fn<(info: WaitingInfo) => void>(),
    doc: 'Called every `progressIntervalMs` while a request is in flight.',
    libraryOnly: true,
  },
} as const;

/** The provider call table and everything derived from it. */
export const HTTP = settingsGroup('Provider time limits', { option: 'http' }, HTTP_SETTINGS);

/** Options of provider calls (all optional; see {@link HTTP_SETTINGS}). */
export type HttpOptions = Partial<SettingsOf<typeof HTTP_SETTINGS>>;

/** zod schema of the library option `http` (numbers bounded, callbacks functions, no unknown keys). */
export const HttpOptionsSchema = HTTP.schema;

/** The defaults of the plain-number settings. */
export const HTTP_DEFAULTS = defaultsOf(HTTP_SETTINGS) as Required<
  Pick<
    HttpOptions,
    | 'timeoutMs'
    | 'retries'
    | 'retryBudgetMs'
    | 'minRetryDelayMs'
    | 'maxRetryDelayMs'
    | 'retryAfterCapMs'
    | 'progressIntervalMs'
  >
>;

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
