import { z } from 'zod';

/**
 * One table per group of settings (limits, clearing, compaction, http …): each row names the
 * setting's zod schema, its default, what it means and the command-line flag that sets it. The
 * library option type, the config-file section, the flags, their help and the generated
 * configuration reference are all read from that one row, so a new setting is one new row.
 */

/** String-to-value parsers for command-line flags (parseArgs gives strings). */
export const flagValue = {
  nonNegInt: z
    .string()
    .regex(/^\d+$/, 'expected a whole number, 0 or more')
    .transform((s) => Number(s))
    .refine((n) => Number.isSafeInteger(n), 'number too large'),
  posInt: z
    .string()
    .regex(/^\d+$/, 'expected a positive whole number')
    .transform((s) => Number(s))
    .refine((n) => Number.isSafeInteger(n) && n > 0, 'expected a positive whole number'),
  ratio: z
    .string()
    .regex(/^(0(\.\d+)?|1(\.0+)?)$/, 'expected a number between 0 and 1')
    .transform((s) => Number(s)),
  /** A number of seconds, given in ms to the setting (config and library take milliseconds). */
  secondsAsMs: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'expected a number of seconds')
    .transform((s) => Number(s))
    .refine((n) => n <= 86_400, 'at most 86400 seconds')
    .refine((n) => n >= 0.001, 'expected more than 0 seconds')
    .transform((s) => Math.round(s * 1000)),
};

/** A flag that takes a value: `--name ARG`. */
export interface ValueFlag {
  name: string;
  /** Placeholder shown in the help (`N`, `R`, `SECONDS`). */
  arg: string;
  /** Turns the flag's text into the setting's value (then checked by the setting's schema). */
  parse: z.ZodType<unknown, string>;
  /** Help text of the flag (plain words, wrapped by the help renderer). */
  help: string;
}

/** A switch: `--on` sets the setting true, `--off` sets it false (either may be absent). */
export interface SwitchFlag {
  on?: string;
  off?: string;
  /** Help of each form. */
  onHelp?: string;
  offHelp?: string;
}

/** One row of a settings table. */
export interface Setting<S extends z.ZodType = z.ZodType> {
  schema: S;
  /** The default value (absent: worked out from other settings, described by `defaultText`). */
  default?: unknown;
  /** The default in words, for the reference, when the value alone does not say it. */
  defaultText?: string;
  /** What the setting does, in one or two sentences (the reference and the library docs). */
  doc: string;
  flag?: ValueFlag | SwitchFlag;
  /** Not a config-file key (library option only, such as a callback). */
  libraryOnly?: boolean;
  /** The key in the config-file section when it differs from the library's. */
  configKey?: string;
}

export type SettingsTable = Record<string, Setting>;

/** The values of a settings table (such as `LIMIT_SETTINGS`): every key present, typed by its row's schema. */
export type SettingsOf<T> = {
  -readonly [K in keyof T]: T[K] extends { schema: infer S extends z.ZodType } ? z.output<S> : never;
};

type Shape<T extends SettingsTable> = { [K in keyof T]: T[K]['schema'] };

/** The rows that are config-file keys too (not `libraryOnly`). */
type ConfigKey<T extends SettingsTable> = {
  [K in keyof T]: T[K] extends { libraryOnly: true } ? never : K;
}[keyof T];

function isValueFlag(f: ValueFlag | SwitchFlag): f is ValueFlag {
  return 'name' in f;
}

/** Everything derived from one settings table. */
export interface SettingsGroup<T extends SettingsTable> {
  /** The group's name in the reference. */
  title: string;
  /** The library option that holds the group (`limits`, `policy` …); none for a CLI-only group. */
  option: string | undefined;
  /** The config-file section (`limits`, `toolResultClearing` …). */
  section: string;
  settings: T;
  /** Partial values, no unknown keys: the library option and (without `libraryOnly` rows) the config section. */
  schema: z.ZodObject<{ [K in keyof T]: z.ZodOptional<T[K]['schema']> }, z.core.$strict>;
  /** The config-file section: `schema` without the library-only rows. */
  configSchema: z.ZodObject<
    {
      [K in ConfigKey<T> as T[K] extends { configKey: infer C extends string } ? C : K]: z.ZodOptional<
        T[K]['schema']
      >;
    },
    z.core.$strict
  >;
  /** node:util parseArgs options of the group's flags. */
  flagOptions: Record<string, { type: 'string' | 'boolean' }>;
  /** zod shape of the flags (strings in, setting values out); errors name the flag. */
  flagShape: Record<string, z.ZodType>;
  /** The settings a config-file section sets, under the library's names. */
  fromConfig(section: Record<string, unknown> | undefined): Partial<SettingsOf<T>>;
  /** The settings the given flag values set (only those given). */
  fromFlags(flags: Record<string, unknown>): Partial<SettingsOf<T>>;
  /** Help lines of the flags (of the `only` rows when given), the text `width` columns after a two-space indent. */
  help(width?: number, only?: readonly (keyof T)[]): string;
}

/** Builds a {@link SettingsGroup} from its table. */
export function settingsGroup<const T extends SettingsTable>(
  title: string,
  names: { option: string; section?: string } | { option?: undefined; section: string },
  settings: T,
): SettingsGroup<T> {
  const shape = Object.fromEntries(Object.entries(settings).map(([k, s]) => [k, s.schema])) as Shape<T>;
  const schema = z.strictObject(shape).partial();
  const configShape = Object.fromEntries(
    Object.entries(settings)
      .filter(([, s]) => !s.libraryOnly)
      .map(([k, s]) => [s.configKey ?? k, s.schema.optional()]),
  );
  const flagOptions: Record<string, { type: 'string' | 'boolean' }> = {};
  const flagShape: Record<string, z.ZodType> = {};
  for (const s of Object.values(settings)) {
    if (!s.flag) continue;
    if (isValueFlag(s.flag)) {
      flagOptions[s.flag.name] = { type: 'string' };
      flagShape[s.flag.name] = s.flag.parse.pipe(s.schema).optional();
    } else
      for (const name of [s.flag.on, s.flag.off])
        if (name !== undefined) {
          flagOptions[name] = { type: 'boolean' };
          flagShape[name] = z.boolean().optional();
        }
  }
  return {
    title,
    option: names.option,
    section: names.section ?? (names.option as string),
    settings,
    schema: schema as SettingsGroup<T>['schema'],
    configSchema: z.strictObject(configShape) as unknown as SettingsGroup<T>['configSchema'],
    flagOptions,
    flagShape,
    fromConfig: (section = {}) =>
      Object.fromEntries(
        Object.entries(settings)
          .filter(([k, s]) => !s.libraryOnly && section[s.configKey ?? k] !== undefined)
          .map(([k, s]) => [k, section[s.configKey ?? k]]),
      ) as Partial<SettingsOf<T>>,
    fromFlags: (flags) => valuesFromFlags(settings, flags) as Partial<SettingsOf<T>>,
    help: (width = 24, only) => flagHelp(settings, width, only as readonly string[] | undefined),
  };
}

/** The settings the given flag values set; a switch's off form wins over its on form. */
function valuesFromFlags(settings: SettingsTable, flags: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(settings)) {
    const f = s.flag;
    if (!f) continue;
    if (isValueFlag(f)) {
      if (flags[f.name] !== undefined) out[k] = flags[f.name];
    } else {
      if (f.on !== undefined && flags[f.on] === true) out[k] = true;
      if (f.off !== undefined && flags[f.off] === true) out[k] = false;
    }
  }
  return out;
}

function flagHelp(settings: SettingsTable, width: number, only: readonly string[] | undefined): string {
  const lines: string[] = [];
  for (const [k, s] of Object.entries(settings)) {
    const f = s.flag;
    if (!f || (only && !only.includes(k))) continue;
    if (isValueFlag(f)) lines.push(...helpEntry(`--${f.name} ${f.arg}`, f.help, width));
    else {
      if (f.on !== undefined) lines.push(...helpEntry(`--${f.on}`, f.onHelp ?? s.doc, width));
      if (f.off !== undefined) lines.push(...helpEntry(`--${f.off}`, f.offHelp ?? s.doc, width));
    }
  }
  return lines.join('\n');
}

/** The help text's right edge. */
const HELP_COLUMNS = 88;

/** One flag's help: the flag, then its text wrapped in a column (on the next line when the flag is long). */
function helpEntry(flag: string, text: string, width: number): string[] {
  const indent = ' '.repeat(2 + width);
  const wrapped = wrap(text, HELP_COLUMNS - indent.length);
  if (flag.length >= width) return [`  ${flag}`, ...wrapped.map((l) => indent + l)];
  return [`  ${flag.padEnd(width)}${wrapped[0]}`, ...wrapped.slice(1).map((l) => indent + l)];
}

function wrap(text: string, columns: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && line.length + 1 + word.length > columns) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines;
}

/** The defaults of a table, as values (rows without a value default are left out). */
export function defaultsOf<T extends SettingsTable>(settings: T): Partial<SettingsOf<T>> {
  return Object.fromEntries(
    Object.entries(settings)
      .filter(([, s]) => s.default !== undefined)
      .map(([k, s]) => [k, s.default]),
  ) as Partial<SettingsOf<T>>;
}
