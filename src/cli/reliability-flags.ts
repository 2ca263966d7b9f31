import { z } from 'zod';
import type { CompactorConfig } from './config.js';
import type { HttpLimits } from '../providers/http-limits.js';

/**
 * Flags of `run` and `compact` about the session directory's lock, resuming and provider
 * time limits, kept in one table so the commands' own flag lists only spread it.
 */
export const RELIABILITY_OPTIONS = {
  wait: { type: 'string' },
  new: { type: 'boolean' },
  timeout: { type: 'string' },
  retries: { type: 'string' },
  'retry-budget': { type: 'string' },
} as const;

/** A number of seconds on the command line (also used by the inspect flags). */
export const seconds = z
  .string()
  .regex(/^\d+(\.\d+)?$/, 'expected a number of seconds')
  .transform((s) => Number(s))
  .refine((n) => n <= 86_400, 'at most 86400 seconds');

const positiveSeconds = seconds.refine((n) => n >= 0.001, 'expected more than 0 seconds');

/** zod shape of {@link RELIABILITY_OPTIONS}. */
export const RELIABILITY_FLAG_SHAPE = {
  wait: seconds.optional(),
  new: z.boolean().optional(),
  timeout: positiveSeconds.optional(),
  retries: z
    .string()
    .regex(/^\d+$/, 'expected a whole number')
    .transform((s) => Number(s))
    .refine((n) => n <= 20, 'at most 20')
    .optional(),
  'retry-budget': positiveSeconds.optional(),
};

export type ReliabilityFlags = z.infer<z.ZodObject<typeof RELIABILITY_FLAG_SHAPE>>;

/** Help lines for {@link RELIABILITY_OPTIONS}. */
export const RELIABILITY_FLAGS_HELP = `  --wait SECONDS      when another compactor is writing --session-dir, wait up to
                      SECONDS for it to finish (default 0: fail at once, naming it)
  --new               start a new session in --session-dir: the one there is moved to
                      DIR/previous/<time>/ (without --new it is continued)

Provider time limits (config "http"):
  --timeout SECONDS       one provider request may take this long (default 120)
  --retries N             retries of a failed request: timeouts, resets, 429, 5xx (default 3)
  --retry-budget SECONDS  all attempts of one provider call together, waits included
                          (default 300); while waiting, stderr gets a line every 15 s
                          when it is not a terminal`;

/** How `--session-dir` is opened, from the flags: lock wait and --new. */
export function storeOptionsFrom(flags: ReliabilityFlags, stderr: NodeJS.WritableStream) {
  return {
    startOver: flags.new ?? false,
    storeLock: {
      waitMs: (flags.wait ?? 0) * 1000,
      onWait: (message: string) => void stderr.write(`compactor: ${message} (up to ${flags.wait ?? 0} s)\n`),
    },
  };
}

/** Provider time limits from the flags over config `http` (seconds on the command line, ms in config). */
export function httpLimitsFrom(flags: ReliabilityFlags, config: CompactorConfig): Partial<HttpLimits> {
  const ms = (s: number | undefined) => (s === undefined ? undefined : Math.round(s * 1000));
  const limits: Partial<HttpLimits> = { ...config.http };
  const timeoutMs = ms(flags.timeout);
  const retryBudgetMs = ms(flags['retry-budget']);
  if (timeoutMs !== undefined) limits.timeoutMs = timeoutMs;
  if (flags.retries !== undefined) limits.retries = flags.retries;
  if (retryBudgetMs !== undefined) limits.retryBudgetMs = retryBudgetMs;
  return limits;
}
