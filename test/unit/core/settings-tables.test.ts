import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { CONFIGURATION_DOC, renderConfigurationDoc } from '#dev/config-doc.js';
import { CompactorConfigSchema } from '#src/cli/config.js';
import { INSPECT } from '#src/cli/inspect-flags.js';
import { RUN_FLAGS_HELP, RUN_OPTIONS } from '#src/cli/run-options.js';
import { settingsFrom } from '#src/cli/settings-flags.js';
import { flagValue, settingsGroup } from '#src/core/settings.js';
import {
  CLEARING,
  COMPACTION,
  LIMITS,
  completeClearingPolicy,
  completeCompactionWait,
} from '#src/projection/index.js';
import { HTTP } from '#src/providers/http-limits.js';
import { createCompactorSession, ROUTE } from '#src/session/index.js';

const GROUPS = [LIMITS, CLEARING, COMPACTION, HTTP, ROUTE, INSPECT] as const;

describe('settings tables: one row gives the option, the config key, the flag and its help', () => {
  it('docs/configuration.md is what `npm run docs:config` writes from the tables (run it after changing a table)', () => {
    expect(readFileSync(CONFIGURATION_DOC, 'utf8')).toBe(renderConfigurationDoc());
  });

  it('a new row is a library option, a config key, a flag with help, and a flag-over-config value', () => {
    const g = settingsGroup(
      'Demo',
      { option: 'demo' },
      {
        stepTokens: {
          schema: z.number().int().nonnegative(),
          default: 5,
          doc: 'Demo step.',
          flag: { name: 'step-tokens', arg: 'N', parse: flagValue.nonNegInt, help: 'demo step in tokens' },
        },
        loud: {
          schema: z.boolean(),
          default: false,
          doc: 'Demo switch.',
          flag: { on: 'loud', off: 'no-loud' },
        },
      },
    );
    expect(g.schema.parse({ stepTokens: 3 })).toEqual({ stepTokens: 3 });
    expect(() => g.schema.parse({ stepTokn: 3 })).toThrow();
    expect(g.configSchema.parse({ loud: true })).toEqual({ loud: true });
    expect(g.flagOptions).toEqual({
      'step-tokens': { type: 'string' },
      loud: { type: 'boolean' },
      'no-loud': { type: 'boolean' },
    });
    const flags = z.object(g.flagShape).parse({ 'step-tokens': '7', 'no-loud': true });
    expect(g.fromFlags(flags)).toEqual({ stepTokens: 7, loud: false });
    expect(() => z.object(g.flagShape).parse({ 'step-tokens': '-1' })).toThrow(/whole number/);
    expect(g.help(20)).toMatch(/^ {2}--step-tokens N {5}demo step in tokens$/m);
    expect(g.help(20)).toMatch(/^ {2}--no-loud/m);
  });

  it('every flag of every table is a `run` option and named in its help', () => {
    for (const g of GROUPS)
      for (const name of Object.keys(g.flagOptions)) {
        expect(RUN_OPTIONS).toHaveProperty([name]);
        expect(RUN_FLAGS_HELP).toContain(`--${name}`);
      }
  });

  it('every config-file key of a table is accepted in its section; an unknown one is refused', () => {
    for (const g of GROUPS) {
      const keys = Object.keys(g.configSchema.shape);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        const bad = CompactorConfigSchema.safeParse({ [g.section]: { [key]: null } });
        expect(bad.success).toBe(false);
        expect(bad.error?.issues[0].path).toEqual([g.section, key]);
      }
      expect(CompactorConfigSchema.safeParse({ [g.section]: { nope: 1 } }).success).toBe(false);
    }
  });

  it('flags win over the config file, section by section, and land in the library options unchanged', () => {
    const s = settingsFrom(
      {
        capacity: 9_000,
        'keep-tool-uses': 4,
        threshold: 5_000,
        timeout: 2_000,
        'compaction-wait-by-cost': true,
      },
      {
        preset: 'vtcode',
        limits: { capacity: 1_000, reservedOutput: 100 },
        toolResultClearing: { keepToolUses: 1, clearAtLeast: 50 },
        compaction: { retainRatio: 0.2 },
        http: { retries: 1 },
      },
    );
    expect(s).toEqual({
      limits: { capacity: 9_000, reservedOutput: 100 },
      policy: { preset: 'vtcode', keepToolUses: 4, clearAtLeast: 50 },
      compaction: { retainRatio: 0.2, threshold: 5_000, waitByCost: true },
      http: { retries: 1, timeoutMs: 2_000 },
    });
  });

  it('the presets differ only where the table says; every other default is the row default', () => {
    const compactor = completeClearingPolicy();
    const vtcode = completeClearingPolicy({ preset: 'vtcode' });
    const differ = Object.keys(compactor).filter(
      (k) => compactor[k as keyof typeof compactor] !== vtcode[k as keyof typeof vtcode],
    );
    expect(differ.sort()).toEqual(['clearWhenPassBuysFewerTurns', 'enabled', 'preset']);
    // The preset also sets where compaction waits: VT Code compacts at the threshold.
    expect(completeCompactionWait({}, 'compactor').waitsForCacheBreak).toBe(true);
    expect(completeCompactionWait({}, 'vtcode').waitsForCacheBreak).toBe(false);
    for (const [k, row] of Object.entries(CLEARING.settings))
      expect(compactor[k as keyof typeof compactor]).toBe(row.default);
  });

  it('a frozen policy is completed as its unfrozen copy is, once, into a frozen policy that completes to itself', () => {
    const given = { preset: 'vtcode' as const, keepToolUses: 2.7, clearAtLeast: -5, enabled: 'yes' as never };
    const frozen = Object.freeze({ ...given });
    const complete = completeClearingPolicy(frozen);
    expect(complete).toEqual(completeClearingPolicy({ ...given }));
    // A value its row refuses takes the preset's.
    const { enabled } = completeClearingPolicy({ preset: 'vtcode' });
    expect(complete).toMatchObject({ keepToolUses: 2, clearAtLeast: 0, enabled });
    expect(Object.isFrozen(complete)).toBe(true);
    expect(completeClearingPolicy(frozen)).toBe(complete);
    expect(completeClearingPolicy(complete)).toBe(complete);
    // An unfrozen policy is completed into an object of its own, as before.
    const open = completeClearingPolicy({ ...given });
    expect(Object.isFrozen(open)).toBe(false);
    expect(completeClearingPolicy({ ...given })).not.toBe(open);
  });

  it('the session resolves its configuration once: limits, the whole policy, compaction and budgets', () => {
    const s = createCompactorSession({
      limits: { capacity: 20_000, reservedOutput: 1_000 },
      compaction: { threshold: 9_000 },
      preset: 'vtcode',
    });
    expect(s.config.policy).toEqual(completeClearingPolicy({ preset: 'vtcode' }));
    expect(s.config.compaction).toMatchObject({
      threshold: 9_000,
      waitsForCacheBreak: false,
      waitRatio: 0.85,
    });
    expect(s.config.budgets).toBe(s.budgets);
    expect(s.budgets).toMatchObject({ capacity: 20_000, compactionThreshold: 9_000 });
    s.close();
  });

  it('the removed limit names are refused with one line naming the key', () => {
    for (const old of ['providerLimit', 'configuredTrigger', 'compactionThreshold', 'threshold'])
      expect(() => createCompactorSession({ limits: { [old]: 1_000 } as never })).toThrow(
        new RegExp(`^createCompactorSession: options\\.limits: .*${old}`),
      );
  });
});
