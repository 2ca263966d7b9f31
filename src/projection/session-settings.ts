import { z } from 'zod';
import { defaultsOf, flagValue, settingsGroup, type SettingsOf } from '../core/settings.js';
import { resolveBudgets, type Budgets, type Limits } from './budgets.js';
import { completeClearingPolicy, type ClearingPolicy, type ClearingPresetName } from './clearing-policy.js';
import { DEFAULT_COMPACTION_WAIT } from './cache-aware.js';
import { DEFAULT_ROUTE_POLICY, type RoutePolicy } from './route-policy.js';

/**
 * The token limits and compaction settings of a session, one row each (schema, default,
 * meaning, flag). The library's `limits` and `compaction` options, the config file's sections
 * of the same names, the flags and their help all come from these two tables.
 */

const count = z.number().int().nonnegative();
const ratio = z.number().gte(0).lte(1);

/** The token limits of a session, one row each (the library's `limits`, config `limits`). */
export const LIMIT_SETTINGS = {
  capacity: {
    schema: count,
    defaultText: "the model's window from the catalog (offline: 32,000)",
    doc: 'Model context window in tokens.',
    flag: {
      name: 'capacity',
      arg: 'N',
      parse: flagValue.posInt,
      help: 'model context window in tokens',
    },
  },
  sessionCeiling: {
    schema: count,
    default: 0,
    doc: 'Session cap on the window; 0 means no cap.',
    flag: {
      name: 'session-ceiling',
      arg: 'N',
      parse: flagValue.nonNegInt,
      help: 'session cap on the window; 0 = no cap',
    },
  },
  reservedOutput: {
    schema: count,
    default: 0,
    doc: "Output tokens reserved from the window for the agent's own requests.",
    flag: {
      name: 'reserved-output',
      arg: 'N',
      parse: flagValue.nonNegInt,
      help: 'output tokens reserved from the window (default 0)',
    },
  },
  trigger: {
    schema: count,
    defaultText: '`toolResultClearing.triggerTokens` (40,000)',
    doc: 'Configured clearing trigger; wins over `toolResultClearing.triggerTokens`.',
    flag: {
      name: 'trigger',
      arg: 'N',
      parse: flagValue.posInt,
      help: 'configured clearing trigger (default 40000)',
    },
  },
  prefixTokens: {
    schema: count,
    defaultText: 'estimated from the request envelope (system prompt and tools), else 0',
    doc: 'System prompt and tool schema tokens, outside the history.',
    flag: {
      name: 'prefix-tokens',
      arg: 'N',
      parse: flagValue.nonNegInt,
      help: 'system prompt + tool schema tokens',
    },
  },
  summaryOutputLimit: {
    schema: z.number().int().positive(),
    defaultText: 'automatic (a share of the window)',
    doc: 'Output limit of a summary call, sent as its max tokens and subtracted from the summary input budget.',
  },
} as const;

/** The limits table and everything derived from it. */
export const LIMITS = settingsGroup('Limits', { option: 'limits' }, LIMIT_SETTINGS);

/** The compaction settings, one row each (the library's `compaction`, config `compaction`). */
export const COMPACTION_SETTINGS = {
  threshold: {
    schema: count,
    defaultText: '75 % of capacity − reserved output',
    doc: 'Explicit compaction threshold in tokens, capped at the prompt budget.',
    flag: {
      name: 'threshold',
      arg: 'N',
      parse: flagValue.posInt,
      help: 'explicit compaction threshold in tokens (default 75 % of capacity − reserved output)',
    },
  },
  thresholdRatio: {
    schema: z.number().gt(0).lte(1),
    default: DEFAULT_ROUTE_POLICY.thresholdRatio,
    doc: 'Caps the threshold at this share of the capacity; only values below 1 lower it.',
  },
  retainRatio: {
    schema: ratio,
    default: DEFAULT_ROUTE_POLICY.retainRatio,
    doc: 'Share of the window kept verbatim as the continuity tail after a local summary.',
  },
  maxOverflowRetries: {
    schema: count,
    default: DEFAULT_ROUTE_POLICY.maxOverflowRetries,
    doc: 'Retries of a summary call that the provider rejects as too large.',
  },
  reinjectBudgetTokens: {
    schema: count,
    defaultText: '0 (off)',
    doc: 'Tokens of recent file reads re-injected after a local summary (every removed result keeps a recall id); 0 disables.',
  },
  summaryOverLastRequest: {
    schema: z.boolean(),
    default: true,
    doc: "A summary by the agent's own model is asked over the last request sent, unchanged, plus the instructions, so the provider's prompt cache serves it; false sends a bounded fork of the history.",
  },
  promptVersion: {
    schema: z.string().regex(/^summary-v\d+$/, 'expected summary-v<N>'),
    default: 'summary-v1',
    doc: 'Version of the summary prompt.',
  },
  retryBackoffMs: {
    schema: count,
    defaultText: 'the capacity-retry machine default',
    doc: 'Wait between capacity retries, in milliseconds.',
  },
  waitsForCacheBreak: {
    schema: z.boolean(),
    default: true,
    defaultText: '`true` (`vtcode`: `false`)',
    doc: 'Put compaction off while the cached request prefix is intact; it runs at the threshold on a turn whose prefix changes anyway.',
    flag: {
      on: 'compaction-waits-for-cache-break',
      onHelp: 'put compaction off while the cached prefix is intact (on by default with preset compactor)',
    },
  },
  waitRatio: {
    schema: z
      .number()
      .gt(0, 'expected a number above 0 and below 1')
      .lt(1, 'expected a number above 0 and below 1'),
    default: DEFAULT_COMPACTION_WAIT.ratio,
    doc: 'How far compaction waits: this share of the way from the threshold to the prompt budget, in (0, 1).',
    flag: {
      name: 'compaction-wait-ratio',
      arg: 'R',
      parse: flagValue.ratio,
      help: 'how far it waits: R of the way from the threshold to the prompt budget, 0 < R < 1 (default 0.85) …',
    },
  },
  waitMaxTokens: {
    schema: count,
    default: DEFAULT_COMPACTION_WAIT.maxTokens,
    doc: 'At most this many tokens past the threshold in a 32k window, proportionally fewer in larger ones (3,000 at 64k).',
    flag: {
      name: 'compaction-wait-max',
      arg: 'N',
      parse: flagValue.nonNegInt,
      help: '… but at most N tokens past the threshold (default 7000), fewer in windows over 32k (3000 at 64k)',
    },
  },
  waitByCost: {
    schema: z.boolean(),
    default: false,
    doc: 'Wait only where the expected cost says waiting pays (in large windows compaction then mostly runs at the threshold).',
    flag: {
      on: 'compaction-wait-by-cost',
      onHelp:
        'wait only where the expected cost says waiting pays (in large windows compaction then mostly runs at the threshold; off by default)',
      off: 'no-compaction-wait-by-cost',
      offHelp: 'wait whatever the expected cost (the default)',
    },
  },
} as const;

/** The compaction table and everything derived from it. */
export const COMPACTION = settingsGroup('Compaction', { option: 'compaction' }, COMPACTION_SETTINGS);

/** Token limits of a session (all optional; see {@link LIMIT_SETTINGS}). */
export type SessionLimits = Partial<SettingsOf<typeof LIMIT_SETTINGS>>;
/** Compaction tuning of a session (all optional; see {@link COMPACTION_SETTINGS}). */
export type CompactionSettings = Partial<SettingsOf<typeof COMPACTION_SETTINGS>>;

/** How far compaction waits while the prompt cache holds: the wait rows, every field filled in. */
export type CompactionWaitSettings = Pick<
  SettingsOf<typeof COMPACTION_SETTINGS>,
  'waitsForCacheBreak' | 'waitRatio' | 'waitMaxTokens' | 'waitByCost'
>;

/** Where a clearing preset's compaction defaults differ from the rows' (preset `compactor`). */
const PRESET_WAIT: Record<ClearingPresetName, Partial<CompactionWaitSettings>> = {
  compactor: {},
  // VT Code compacts at the threshold.
  vtcode: { waitsForCacheBreak: false },
};

/** Fills the wait settings from the preset's defaults; a value its row's schema rejects takes the default. */
export function completeCompactionWait(
  partial: Partial<CompactionWaitSettings> = {},
  preset: ClearingPresetName = 'compactor',
): CompactionWaitSettings {
  const base = { ...defaultsOf(COMPACTION_SETTINGS), ...PRESET_WAIT[preset] } as CompactionWaitSettings;
  const out: Record<string, unknown> = {};
  for (const key of ['waitsForCacheBreak', 'waitRatio', 'waitMaxTokens', 'waitByCost'] as const) {
    const given = COMPACTION_SETTINGS[key].schema.safeParse(partial[key]);
    out[key] = given.success ? given.data : base[key];
  }
  return out as CompactionWaitSettings;
}

/** The settings a session or a command is given (all optional). */
export interface SettingsInput {
  limits?: SessionLimits;
  policy?: Partial<ClearingPolicy>;
  compaction?: CompactionSettings;
}

/**
 * The one resolved configuration of a session (or a command): the projection's limits, the
 * whole clearing policy, the compaction settings and the budgets, read as they are by the
 * runner, the actors and the reports.
 */
export interface SessionConfig {
  /** Projection limits with the effective trigger, evidence ratio, threshold and route policy in them. */
  limits: Limits;
  policy: ClearingPolicy;
  /** The compaction settings as given, the wait filled in from the preset. */
  compaction: CompactionSettings & CompactionWaitSettings;
  /** Computed once, from `limits`. */
  budgets: Budgets;
}

/**
 * The one place settings become limits and budgets: the capacity is `limits.capacity`, else
 * the route's window; the prefix is `limits.prefixTokens`, else the envelope's estimate; the
 * trigger is `limits.trigger`, else the policy's; the route policy is the route's entry with
 * `compaction` on top.
 */
export function resolveSettings(
  input: SettingsInput,
  route: { contextWindow?: number | null; prefixTokens?: number; routePolicy?: RoutePolicy } = {},
): SessionConfig {
  const l = input.limits ?? {};
  const c = input.compaction ?? {};
  const policy = completeClearingPolicy(input.policy);
  const routePolicy: RoutePolicy = { ...(route.routePolicy ?? DEFAULT_ROUTE_POLICY) };
  if (c.thresholdRatio !== undefined) routePolicy.thresholdRatio = c.thresholdRatio;
  if (c.retainRatio !== undefined) routePolicy.retainRatio = c.retainRatio;
  if (c.maxOverflowRetries !== undefined) routePolicy.maxOverflowRetries = c.maxOverflowRetries;
  const limits: Limits = {
    capacity: l.capacity ?? route.contextWindow ?? undefined,
    sessionCeiling: l.sessionCeiling,
    reservedOutput: l.reservedOutput ?? 0,
    prefixTokens: l.prefixTokens ?? route.prefixTokens ?? 0,
    trigger: l.trigger || policy.triggerTokens,
    evidenceWindowRatio: policy.evidenceWindowRatio,
    threshold: c.threshold,
    routePolicy,
    summaryOutputLimit: l.summaryOutputLimit,
  };
  const compaction = { ...c, ...completeCompactionWait(c, policy.preset) };
  return { limits, policy, compaction, budgets: resolveBudgets(limits) };
}
