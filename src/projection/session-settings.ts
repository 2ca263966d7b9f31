import { z } from 'zod';
import { flagValue, settingsGroup, type SettingsOf } from '../core/settings.js';
import { resolveBudgets, type Budgets, type Limits } from './budgets.js';
import { completeClearingPolicy, type ClearingPolicy } from './clearing-policy.js';
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
      help: 'model context window in tokens (default: the catalog window, 32000 offline)',
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
export const LIMITS = settingsGroup('Limits', 'limits', LIMIT_SETTINGS);

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
    defaultText: 'min(4,000, 5 % of capacity)',
    doc: 'Tokens of recent file reads re-injected after a local summary; 0 disables.',
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
} as const;

/** The compaction table and everything derived from it. */
export const COMPACTION = settingsGroup('Compaction', 'compaction', COMPACTION_SETTINGS);

/** Token limits of a session (all optional; see {@link LIMIT_SETTINGS}). */
export type SessionLimits = Partial<SettingsOf<typeof LIMIT_SETTINGS>>;
/** Compaction tuning of a session (all optional; see {@link COMPACTION_SETTINGS}). */
export type CompactionSettings = Partial<SettingsOf<typeof COMPACTION_SETTINGS>>;

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
  compaction: CompactionSettings;
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
  return { limits, policy, compaction: c, budgets: resolveBudgets(limits) };
}
