import { headWithinTokens } from '../preview.js';
import type { SessionFacts } from './facts.js';
import { itemsOf, SECTION_KEYS, type Item, type RenderOptions } from './render-items.js';

/**
 * Writes extracted facts in the summary template's section layout within an output budget. Items are
 * whole bullet lines; when the budget is short, lower-priority and older items are left
 * out first and each section says how many it omitted, so the output is never cut
 * mid-line. Failures, modified files, restrictions and pending items outrank the key facts
 * of recent tool output, which outrank the chronological command log and the list of files
 * read (repeated exploration goes first).
 */

export { SECTION_KEYS, type RenderOptions, type SectionKey } from './render-items.js';

/** A rendered summary. */
export interface RenderedSummary {
  text: string;
  /** `length` only when not even the headings fit. */
  finishReason: 'stop' | 'length';
  /** Items left out for the budget. */
  omitted: number;
}

function render(items: readonly Item[], kept: ReadonlySet<Item>, headings: readonly string[]): string {
  const out: string[] = [];
  SECTION_KEYS.forEach((key, i) => {
    out.push(`## ${headings[i]}`);
    const all = items.filter((it) => it.section === key);
    const shown = all.filter((it) => kept.has(it)).sort((a, b) => a.order - b.order);
    for (const it of shown) out.push(it.text);
    const omitted = all.length - shown.length;
    if (omitted > 0) out.push(`- … ${omitted} more omitted (older or lower priority)`);
    else if (shown.length === 0) out.push('- (none)');
    out.push('');
  });
  return out.join('\n').trim();
}

// Each section may need one omission note; the greedy fill reserves room for all of them.
const OMISSION_NOTE = '- … 999 more omitted (older or lower priority)\n';

/**
 * Smallest output cap at which the full template can hold any item: the headings with their
 * placeholders plus the omission notes reserved for every section. Below it a full rendering
 * would be empty headings only.
 */
export function fullTemplateFloorTokens(
  headings: readonly string[],
  est: RenderOptions['estimator'],
): number {
  return est.text(render([], new Set(), headings)) + est.text(OMISSION_NOTE) * SECTION_KEYS.length;
}

/** Renders facts within `maxOutputTokens` (see module comment for the policy). */
export function renderSummary(facts: SessionFacts, options: RenderOptions): RenderedSummary {
  const est = options.estimator;
  const budget = options.maxOutputTokens;
  const items = itemsOf(facts, options);
  const kept = new Set<Item>();
  const skeleton = render(items, kept, options.headings);
  if (est.text(skeleton) > budget)
    return { text: headWithinTokens(skeleton, budget, est), finishReason: 'length', omitted: items.length };

  // Greedy by priority, newest first; each section may need one omission note.
  const noteCost = est.text(OMISSION_NOTE);
  let used = est.text(skeleton) + noteCost * SECTION_KEYS.length;
  const byValue = [...items].sort((a, b) => b.priority - a.priority || b.rank - a.rank || a.order - b.order);
  for (const it of byValue) {
    const cost = est.text(it.text) + 1;
    if (used + cost > budget) continue;
    kept.add(it);
    used += cost;
  }
  let text = render(items, kept, options.headings);
  // Estimates of separate lines are not exactly additive: drop the least valuable until it fits.
  for (let k = byValue.length - 1; est.text(text) > budget && k >= 0; k--) {
    if (!kept.delete(byValue[k])) continue;
    text = render(items, kept, options.headings);
  }
  return { text, finishReason: 'stop', omitted: items.length - kept.size };
}
