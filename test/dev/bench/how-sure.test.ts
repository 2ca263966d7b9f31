import { describe, expect, it } from '@jest/globals';
import { DEFAULTS_POLICY, howSureSection } from '#dev/bench/how-sure-section.js';
import { ResamplePlans } from '#dev/bench/paired-bootstrap.js';
import { policyRun, type PolicyRun, type SessionRun } from '#dev/bench/retention-runs.js';
import { choiceSection, windowTable } from '#dev/bench/retention-sections.js';
import { PRICES } from '#dev/replay/prices.js';
import { emptyTotals } from '#dev/replay/replay.js';
import { resolveBudgets } from '#src/projection/budgets.js';

const SESSIONS = 24;
const budgets = resolveBudgets({ capacity: 64_000, reservedOutput: 8_000 });

/** A run whose sessions cost `dollars(i)` (every price row) and recall `recalled(i)` of 10 needed results. */
function run(name: string, dollars: (i: number) => number, recalled: (i: number) => number): PolicyRun {
  const perSession = Array.from({ length: SESSIONS }, (_, i): SessionRun => {
    const totals = { ...emptyTotals(), turns: 1, needed: 10, present: recalled(i) };
    return {
      ok: true,
      result: { policy: name, budgets, turns: [], totals },
      dollars: PRICES.map(() => dollars(i)),
    };
  });
  return policyRun(
    { name, description: name, source: 'compactor', project: (h) => Promise.resolve(h) },
    perSession,
    perSession.map((_, i) => `s${i}`),
  );
}

// Sessions cost very different amounts; differences between policies are a few cents either way.
const base = (i: number) => 0.5 + ((i * 7) % 11) * 0.4;
const swing = (i: number) => (i % 2 === 0 ? 1 : -1) * (0.1 + (i % 5) * 0.05);
const defaults = run(DEFAULTS_POLICY, base, (i) => 6 + (i % 3));
// Twelve cents cheaper in all and one more recalled result over 24 sessions; sessions swing by up to ±30 cents.
const nearly = run(
  'nearly-the-same',
  (i) => base(i) + swing(i) - (i === 0 ? 0.02 : 0),
  (i) => 6 + (i % 3) + (i === 5 ? 1 : 0) - (i % 4 === 1 ? 1 : 0) + (i % 4 === 3 ? 1 : 0),
);
const cheaper = run(
  'clearly-cheaper',
  (i) => base(i) * 0.7,
  (i) => 6 + (i % 3),
);

describe('how sure: the defaults against every other policy', () => {
  it('§14: each row gives both differences with a 95 % interval and says better, worse or within noise', () => {
    const section = howSureSection([defaults, nearly, cheaper], 64_000, 'check', new ResamplePlans());
    expect(section?.title).toBe(
      'How sure: the defaults against each other setting and policy, check half, window 64k',
    );
    const rows = Object.fromEntries(section!.rows.map((r) => [r[0], r.slice(1)]));
    expect(Object.keys(rows)).toEqual(['nearly-the-same', 'clearly-cheaper']);
    expect(rows['nearly-the-same']).toEqual([
      expect.stringMatching(/^−[\d.]+ pt \(−[\d.]+ to \+[\d.]+\)$/),
      'within noise',
      expect.stringMatching(/^\+\$0\.12 \(−\$[\d.]+ to \+\$[\d.]+\)$/),
      'within noise',
      SESSIONS,
    ]);
    expect(rows['clearly-cheaper']).toEqual([
      '0.0 pt (0.0 to 0.0)',
      'within noise',
      expect.stringMatching(/^\+\$[\d.]+ \(\+\$[\d.]+ to \+\$[\d.]+\)$/),
      'worse',
      SESSIONS,
    ]);
    expect(section!.notes?.join(' ')).toMatch(/resampled with replacement 2,000 times/);
  });

  it('§14: the frontier column and the choice of defaults keep a strict domination but say when it is within noise', () => {
    const plans = new ResamplePlans();
    const table = windowTable([defaults, nearly, cheaper], 64_000, 'check', SESSIONS, plans);
    const frontier = Object.fromEntries(table.rows.map((r) => [r[0], r[r.length - 1]]));
    // "nearly-the-same" has more recall for less money, but by less than the sessions vary.
    expect(frontier[DEFAULTS_POLICY]).toBe('dominated by nearly-the-same (within noise), clearly-cheaper');
    expect(frontier['clearly-cheaper']).toBe('yes');
    expect(table.notes?.join(' ')).toMatch(/"\(within noise\)" after a dominating policy/);

    // The choice of defaults keeps its strict verdicts too, marked the same way.
    const noClearing = run(
      'no-clearing',
      (i) => base(i) - swing(i),
      (i) => 6 + (i % 3),
    );
    const byWindow = new Map([[64_000, [noClearing, defaults, nearly, cheaper]]]);
    const choice = choiceSection([], DEFAULTS_POLICY, byWindow, byWindow, plans);
    expect(choice.rows[0]).toEqual([
      DEFAULTS_POLICY,
      'tuning',
      '64k',
      'no (nearly-the-same (within noise), clearly-cheaper)',
      'yes (within noise)',
    ]);
  });
});
