import type { Estimator } from '../../estimate/estimator.js';
import { headUnits } from '../../core/text.js';
import { headWithinTokens } from '../preview.js';
import type { CommandFact, SessionFacts } from './facts.js';
import { SECTION_KEYS, type RenderedSummary, type SectionKey } from './render.js';

/**
 * The condensed rendering the offline summarizer uses for the hierarchical abstract band
 * (VT Code caps that call at 150 output tokens) and for any output cap too small for the
 * full summary template: the goal, key outcomes (completed checks), failing checks and files
 * modified, under the template's own headings and in its order, with empty sections left
 * out. Whole items are dropped by priority (goal, failing checks, files modified, outcomes;
 * newest first inside each) until the text fits, so it ends with `stop` unless not even the
 * goal heading fits.
 */

/** The template slots an abstract uses, in template order. */
const ABSTRACT_SLOTS = [
  'goal',
  'completed',
  'failed',
  'filesModified',
] as const satisfies readonly SectionKey[];
type AbstractSlot = (typeof ABSTRACT_SLOTS)[number];

const PRIORITY: Record<AbstractSlot, number> = { goal: 3, failed: 2, filesModified: 1, completed: 0 };

// Commands in an abstract show their first line, at most this many characters.
const MAX_ABSTRACT_COMMAND_CHARS = 80;

/** Options of {@link renderAbstract}. */
export interface AbstractRenderOptions {
  maxOutputTokens: number;
  estimator: Estimator;
  /** Heading text per slot, in `SECTION_KEYS` order (from the prompt file). */
  headings: readonly string[];
}

interface AbstractItem {
  slot: AbstractSlot;
  text: string;
  /** Larger is newer. */
  rank: number;
}

function shortCommand(command: string): string {
  const first = command.split('\n')[0];
  const shown =
    first.length > MAX_ABSTRACT_COMMAND_CHARS || first !== command
      ? `${headUnits(first, MAX_ABSTRACT_COMMAND_CHARS)}…`
      : first;
  return shown.includes('`') ? `\`\` ${shown} \`\`` : `\`${shown}\``;
}

function outcome(c: CommandFact): string {
  return c.exitCode === null ? c.status : `exit ${c.exitCode}`;
}

/** Carried lines of a previous summary under `slot`, without their bullet. */
function carried(facts: SessionFacts, headings: readonly string[], slot: AbstractSlot): string[] {
  const lines = facts.carried.get(headings[SECTION_KEYS.indexOf(slot)]) ?? [];
  return lines.map((l) => l.replace(/^-\s*/, '').trim()).filter((l) => l !== '' && !l.startsWith('…'));
}

function itemsOf(facts: SessionFacts, options: AbstractRenderOptions): AbstractItem[] {
  const items: AbstractItem[] = [];
  const add = (slot: AbstractSlot, text: string, rank: number) => items.push({ slot, text, rank });
  const older = (slot: AbstractSlot) =>
    carried(facts, options.headings, slot).forEach((t, i, all) => add(slot, t, i - all.length));

  // The first goal of the session: a carried one when this fork starts with an earlier summary.
  const goal = carried(facts, options.headings, 'goal')[0] ?? facts.goal.replace(/\s+/g, ' ').trim();
  if (goal !== '') {
    const cap = Math.max(Math.floor(options.maxOutputTokens / 3), 8);
    const head = headWithinTokens(goal, cap, options.estimator);
    add('goal', head.length < goal.length ? `${head.trimEnd()}…` : head, Infinity);
  }
  older('completed');
  for (const c of facts.commands.filter((c) => c.isCheck && c.status === 'completed'))
    add('completed', `${shortCommand(c.command)} → ${outcome(c)}`, c.last);
  older('failed');
  for (const c of facts.commands.filter((c) => c.status === 'failed'))
    add(
      'failed',
      `${shortCommand(c.command)} → ${c.failedExitCode === null ? 'failed' : `exit ${c.failedExitCode}`}`,
      c.last,
    );
  older('filesModified');
  for (const f of facts.filesModified) add('filesModified', f.text, f.last);
  return items;
}

function render(
  items: readonly AbstractItem[],
  kept: ReadonlySet<AbstractItem>,
  headings: readonly string[],
): string {
  const out: string[] = [];
  for (const slot of ABSTRACT_SLOTS) {
    const shown = items.filter((it) => it.slot === slot && kept.has(it)).sort((a, b) => a.rank - b.rank);
    if (shown.length === 0 && slot !== 'goal') continue;
    out.push(`## ${headings[SECTION_KEYS.indexOf(slot)]}`);
    if (shown.length === 0) out.push('- (none)');
    // Files modified share one line: the abstract is about which files, not their history.
    else if (slot === 'filesModified') out.push(`- ${shown.map((it) => it.text).join(', ')}`);
    else for (const it of shown) out.push(`- ${it.text}`);
  }
  return out.join('\n');
}

/** Renders the condensed abstract within `maxOutputTokens` (see module comment). */
export function renderAbstract(facts: SessionFacts, options: AbstractRenderOptions): RenderedSummary {
  const est = options.estimator;
  const budget = options.maxOutputTokens;
  const items = itemsOf(facts, options);
  const byValue = [...items].sort((a, b) => PRIORITY[b.slot] - PRIORITY[a.slot] || b.rank - a.rank);
  const kept = new Set<AbstractItem>();
  for (const it of byValue) {
    kept.add(it);
    if (est.text(render(items, kept, options.headings)) > budget) kept.delete(it);
  }
  const text = render(items, kept, options.headings);
  const goalLeftOut = items.some((it) => it.slot === 'goal' && !kept.has(it));
  if (goalLeftOut || est.text(text) > budget)
    return {
      text: headWithinTokens(render(items, new Set(items), options.headings), budget, est),
      finishReason: 'length',
      omitted: items.length,
    };
  return { text, finishReason: 'stop', omitted: items.length - kept.size };
}
