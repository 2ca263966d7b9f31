import { z } from 'zod';
import type { CompactorConfig } from './config.js';
import { UserError } from '../core/errors.js';
import { seconds } from './reliability-flags.js';

/** Flags of `run` and `compact` for `--inspect=stately`: where its relay listens and how long to wait. */
export const INSPECT_OPTIONS = {
  'inspect-port': { type: 'string' },
  'inspect-wait': { type: 'string' },
} as const;

/** zod shape of {@link INSPECT_OPTIONS}. */
export const INSPECT_FLAG_SHAPE = {
  'inspect-port': z
    .string()
    .regex(/^\d+$/, 'expected a port number (0 picks a free one)')
    .transform((s) => Number(s))
    .refine((n) => n <= 65_535, 'at most 65535')
    .optional(),
  'inspect-wait': seconds.refine((n) => n <= 3_600, 'at most 3600 seconds').optional(),
};

type InspectFlags = z.infer<z.ZodObject<typeof INSPECT_FLAG_SHAPE>> & { inspect?: string };

/** The default port of the Stately relay; when it is taken (and no port was asked for), a free one. */
const DEFAULT_INSPECT_PORT = 8080;
/** How long `--inspect=stately` waits for a viewer before the run goes on without one. */
const DEFAULT_INSPECT_WAIT_SECONDS = 10;

/** Help lines for {@link INSPECT_OPTIONS} (placed under `--inspect`). */
export const INSPECT_FLAGS_HELP = `  --inspect-port N    with --inspect=stately: port on 127.0.0.1 (default 8080, or a
                      free one when 8080 is taken; 0: always a free one)
  --inspect-wait SECONDS  with --inspect=stately: how long to wait for the inspector to
                      connect before running without it (default 10)`;

/** Where the Stately relay listens and how long the run waits for a viewer (flags over config `inspect`). */
export interface StatelySettings {
  port: number;
  /** True when a port was asked for: a taken one is then an error, not a fallback. */
  portGiven: boolean;
  waitSeconds: number;
}

/** Stately settings from flags over config; the two flags make sense only with `--inspect=stately`. */
export function statelySettingsFrom(command: string, flags: InspectFlags, config: CompactorConfig) {
  const stately = flags.inspect === 'stately';
  for (const name of ['inspect-port', 'inspect-wait'] as const)
    if (flags[name] !== undefined && !stately)
      throw new UserError(`${command}: --${name} needs --inspect=stately`);
  const port = flags['inspect-port'] ?? config.inspect?.port;
  return {
    port: port ?? DEFAULT_INSPECT_PORT,
    portGiven: port !== undefined,
    waitSeconds: flags['inspect-wait'] ?? config.inspect?.waitSeconds ?? DEFAULT_INSPECT_WAIT_SECONDS,
  } satisfies StatelySettings;
}
