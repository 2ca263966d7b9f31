import { z } from 'zod';
import type { CompactorConfig } from './config.js';
import { UserError } from '../core/errors.js';
import { seconds } from './reliability-flags.js';
import { settingsGroup } from '../core/settings.js';

/** The Stately relay settings (`--inspect=stately`), one row each: config `inspect` and the flags. */
export const INSPECT_SETTINGS = {
  port: {
    schema: z.number().int().nonnegative().max(65_535, 'at most 65535'),
    default: 8080,
    defaultText: '8080, or a free one when 8080 is taken',
    doc: 'Port of the Stately inspector relay on 127.0.0.1; 0 always takes a free one, a taken port asked for is an error.',
    flag: {
      name: 'inspect-port',
      arg: 'N',
      parse: z
        .string()
        .regex(/^\d+$/, 'expected a port number (0 picks a free one)')
        .transform((s) => Number(s)),
      help: 'with --inspect=stately: port on 127.0.0.1 (default 8080, or a free one when 8080 is taken; 0: always a free one)',
    },
  },
  waitSeconds: {
    schema: z.number().gte(0).lte(3_600, 'at most 3600 seconds'),
    default: 10,
    doc: 'How long a run waits for the inspector to connect before it goes on without it; 0 does not wait.',
    flag: {
      name: 'inspect-wait',
      arg: 'SECONDS',
      parse: seconds,
      help: 'with --inspect=stately: how long to wait for the inspector to connect before running without it (default 10)',
    },
  },
} as const;

/** The inspection table (CLI only: the library takes an `inspect` observer instead). */
export const INSPECT = settingsGroup('Stately inspection', { section: 'inspect' }, INSPECT_SETTINGS);

/** Flags of `run` and `compact` for `--inspect=stately`, their zod shape and help (placed under `--inspect`). */
export const INSPECT_OPTIONS = INSPECT.flagOptions;
export const INSPECT_FLAG_SHAPE = INSPECT.flagShape;
export const INSPECT_FLAGS_HELP = INSPECT.help(20);

/** Where the Stately relay listens and how long the run waits for a viewer (flags over config `inspect`). */
export interface StatelySettings {
  port: number;
  /** True when a port was asked for: a taken one is then an error, not a fallback. */
  portGiven: boolean;
  waitSeconds: number;
}

/** Stately settings from flags over config; the two flags make sense only with `--inspect=stately`. */
export function statelySettingsFrom(
  command: string,
  flags: Record<string, unknown> & { inspect?: string },
  config: CompactorConfig,
): StatelySettings {
  const stately = flags.inspect === 'stately';
  for (const name of Object.keys(INSPECT.flagOptions))
    if (flags[name] !== undefined && !stately)
      throw new UserError(`${command}: --${name} needs --inspect=stately`);
  const given = { ...INSPECT.fromConfig(config.inspect), ...INSPECT.fromFlags(flags) };
  return {
    port: given.port ?? INSPECT_SETTINGS.port.default,
    portGiven: given.port !== undefined,
    waitSeconds: given.waitSeconds ?? INSPECT_SETTINGS.waitSeconds.default,
  };
}
