import { z } from 'zod';
import { HTTP } from '../providers/http-limits.js';

/**
 * Flags of `run` and `compact` about the session directory's lock, resuming and provider
 * time limits, kept in one table so the commands' own flag lists only spread it.
 */
export const RELIABILITY_OPTIONS = {
  wait: { type: 'string' },
  new: { type: 'boolean' },
  ...HTTP.flagOptions,
} as const;

/** A number of seconds on the command line (also used by the inspect flags). */
export const seconds = z
  .string()
  .regex(/^\d+(\.\d+)?$/, 'expected a number of seconds')
  .transform((s) => Number(s))
  .refine((n) => n <= 86_400, 'at most 86400 seconds');

/** zod shape of {@link RELIABILITY_OPTIONS}. */
export const RELIABILITY_FLAG_SHAPE = {
  wait: seconds.optional(),
  new: z.boolean().optional(),
  ...HTTP.flagShape,
};

export type ReliabilityFlags = z.infer<z.ZodObject<typeof RELIABILITY_FLAG_SHAPE>>;

/** Help lines for {@link RELIABILITY_OPTIONS}. */
export const RELIABILITY_FLAGS_HELP = `  --wait SECONDS      when another compactor is writing --session-dir, wait up to
                      SECONDS for it to finish (default 0: fail at once, naming it)
  --new               start a new session in --session-dir: the one there is moved to
                      DIR/previous/<time>/ (without --new it is continued)

Provider time limits (config "http"):
${HTTP.help(24)}`;

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
