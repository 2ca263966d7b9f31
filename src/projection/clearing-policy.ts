/**
 * The `toolResultClearing` policy: local, request-only clearing of old tool
 * results. Two named presets: `compactor` (the defaults, chosen on the retention pilot's
 * tuning half) and `vtcode` (VT Code's own defaults).
 */

import { z } from 'zod';
import { defaultsOf, flagValue, settingsGroup, type SettingsOf } from '../core/settings.js';

/** Names of the clearing presets. */
export const CLEARING_PRESET_NAMES = ['compactor', 'vtcode'] as const;
/** A clearing preset: `compactor` (the defaults) or `vtcode` (VT Code's own defaults). */
export type ClearingPresetName = (typeof CLEARING_PRESET_NAMES)[number];

/** The evidence window is half the local trigger by default. */
export const DEFAULT_EVIDENCE_WINDOW_RATIO = 0.5;

const count = z.number().int().nonnegative();

/**
 * The tool-result clearing settings, one row each: schema, default (preset `compactor`; the
 * `vtcode` preset's differences are below), meaning and flag. The library's `policy`, the
 * config's `toolResultClearing`, the clearing flags and their help all come from here.
 */
export const CLEARING_SETTINGS = {
  preset: {
    schema: z.enum(CLEARING_PRESET_NAMES),
    default: 'compactor',
    doc: "The preset the other clearing settings start from: `compactor` keeps tool results until compaction and lets compaction wait while the prompt cache is intact; `vtcode` is VT Code's clearing from the trigger, compaction at the threshold. In the config file it is the top-level `preset`.",
    libraryOnly: true,
    flag: {
      name: 'preset',
      arg: 'NAME',
      parse: z.string(),
      help: "clearing preset: compactor (default: keep tool results until compaction, which waits while the prompt cache is intact, and clear them instead where a summary would buy few steps) or vtcode (VT Code's clearing from 40,000 tokens)",
    },
  },
  enabled: {
    schema: z.boolean(),
    default: false,
    defaultText: '`false` (`vtcode`: `true`)',
    doc: 'Local clearing of old tool results on or off.',
    flag: { off: 'no-clearing', offHelp: 'turn local clearing off' },
  },
  triggerTokens: {
    schema: count,
    default: 40_000,
    doc: 'Configured clearing trigger, capped at 3/5 of the history budget; `limits.trigger` wins over it.',
  },
  keepToolUses: {
    schema: count,
    default: 2,
    doc: 'Newest tool results kept, each with its whole batch.',
    flag: {
      name: 'keep-tool-uses',
      arg: 'N',
      parse: flagValue.nonNegInt,
      help: 'newest results kept, each with its whole batch (default 2)',
    },
  },
  keepRecentToolBatches: {
    schema: count,
    default: 2,
    doc: 'Newest tool-call batches kept; 0 disables this rule.',
    flag: {
      name: 'keep-recent-batches',
      arg: 'N',
      parse: flagValue.nonNegInt,
      help: 'newest tool-call batches kept (default 2; 0 disables)',
    },
  },
  clearToolInputs: {
    schema: z.boolean(),
    default: true,
    doc: 'Replace large inputs of cleared calls with a short placeholder.',
    flag: { off: 'no-clear-inputs', offHelp: 'keep large inputs of cleared calls' },
  },
  evidenceWindowRatio: {
    schema: z
      .number()
      .gt(0, 'expected a number above 0 and at most 1')
      .lte(1, 'expected a number above 0 and at most 1'),
    default: DEFAULT_EVIDENCE_WINDOW_RATIO,
    doc: 'Opt-in: the evidence window is this share of the local trigger, a number in (0, 1].',
    flag: {
      name: 'evidence-ratio',
      arg: 'R',
      parse: flagValue.ratio,
      help: 'opt-in: evidence window = R × local trigger, 0 < R ≤ 1 (default 0.5)',
    },
  },
  clearAtLeast: {
    schema: count,
    default: 0,
    doc: 'Above 0, clear in steps so the prompt cache holds: cleared results stay cleared, and a step (when a request must fit) clears all but the newest; 0 clears on every request.',
    flag: {
      name: 'clear-at-least',
      arg: 'N',
      parse: flagValue.nonNegInt,
      help: 'above 0: clear in steps (cleared results stay cleared; a step, when a request must be made to fit, clears all but the newest), so the request prefix stays cached between steps (default 0: off)',
    },
  },
  clearWhenPassBuysFewerTurns: {
    schema: count,
    default: 10,
    defaultText: '10 (`vtcode`: 0)',
    doc: 'Clear old tool results instead of compacting when a summary pass would buy fewer turns than this; 0 never clears first.',
    flag: {
      name: 'clear-when-pass-buys-fewer',
      arg: 'N',
      parse: flagValue.nonNegInt,
      help: 'clear old tool results instead of compacting when a summary would buy fewer than N steps like the newest (default 10 with preset compactor; 0: never)',
    },
  },
} as const;

/** Tool-result clearing: the table and everything derived from it. */
export const CLEARING = settingsGroup(
  'Tool-result clearing',
  { option: 'policy', section: 'toolResultClearing' },
  CLEARING_SETTINGS,
);

/** Local tool-result clearing settings, every field filled in. */
export type ClearingPolicy = SettingsOf<typeof CLEARING_SETTINGS>;

/**
 * The defaults (preset `compactor`): with a prompt cache, every clearing step rewrites the
 * cached prefix, and on the retention pilot's tuning half no clearing setting paid for that
 * rewrite; keeping results until compaction and letting compaction wait while the cache is
 * intact kept more evidence for fewer dollars. Clearing stays one option away
 * (`enabled: true` keeps VT Code's rules, or preset `vtcode`).
 */
export const DEFAULT_CLEARING_POLICY: Readonly<ClearingPolicy> = Object.freeze(
  defaultsOf(CLEARING_SETTINGS) as ClearingPolicy,
);

/**
 * VT Code's defaults (preset `vtcode`): enabled, trigger 40,000, keep 2 tool uses and 2 recent
 * batches, clear inputs, clear everything eligible at once, compact at the threshold.
 */
export const VTCODE_CLEARING_POLICY: Readonly<ClearingPolicy> = Object.freeze({
  ...DEFAULT_CLEARING_POLICY,
  preset: 'vtcode',
  enabled: true,
  clearWhenPassBuysFewerTurns: 0,
});

/** Every preset by name. */
export const CLEARING_PRESETS: Readonly<Record<ClearingPresetName, Readonly<ClearingPolicy>>> = Object.freeze(
  {
    compactor: DEFAULT_CLEARING_POLICY,
    vtcode: VTCODE_CLEARING_POLICY,
  },
);

/** True for the name of a clearing preset. */
export function isClearingPreset(value: unknown): value is ClearingPresetName {
  return typeof value === 'string' && Object.hasOwn(CLEARING_PRESETS, value);
}

/** True for a usable evidence window ratio: a finite number in (0, 1]. */
export function isEvidenceWindowRatio(value: unknown): value is number {
  return CLEARING_SETTINGS.evidenceWindowRatio.schema.safeParse(value).success;
}

/**
 * Fills a partial policy from its preset (default `compactor`). Past the zod option checks a
 * field may still be off: a token count is made a whole number of 0 or more, anything else its
 * row's schema rejects takes the preset's value.
 */
export function completeClearingPolicy(partial: Partial<ClearingPolicy> = {}): ClearingPolicy {
  // A frozen policy (a resolved run's settings) cannot change: it is completed once, into a
  // frozen policy that completes to itself, where every turn used to complete it several times.
  if (!Object.isFrozen(partial)) return completePolicy(partial);
  let known = completed.get(partial);
  if (known === undefined) {
    known = Object.freeze(completePolicy(partial));
    completed.set(partial, known);
    completed.set(known, known);
  }
  return known;
}

/** Complete frozen policies by the frozen partial they were made from. */
const completed = new WeakMap<object, ClearingPolicy>();

function completePolicy(partial: Partial<ClearingPolicy>): ClearingPolicy {
  const preset = isClearingPreset(partial.preset) ? partial.preset : DEFAULT_CLEARING_POLICY.preset;
  const base = CLEARING_PRESETS[preset];
  const out: Record<string, unknown> = {};
  for (const [key, row] of Object.entries(CLEARING_SETTINGS)) {
    const fallback = base[key as keyof ClearingPolicy];
    let value = (partial as Record<string, unknown>)[key];
    if (Number.isInteger(fallback) && typeof value === 'number' && !Number.isNaN(value))
      value = Math.max(0, Math.floor(Math.min(value, Number.MAX_SAFE_INTEGER)));
    const given = row.schema.safeParse(value);
    out[key] = given.success ? given.data : fallback;
  }
  return { ...(out as ClearingPolicy), preset };
}
