import type { Estimator } from '../../estimate/estimator.js';
import { headUnits } from '../../core/text.js';
import { headWithinTokens, previewText } from '../preview.js';
import type { CommandFact, SessionFacts } from './extract.js';

/**
 * Writes extracted facts in the L8 section layout within an output budget. Items are
 * whole bullet lines; when the budget is short, lower-priority and older items are left
 * out first and each section says how many it omitted, so the output is never cut
 * mid-line. Failures, modified files, restrictions and pending items outrank the
 * chronological command log and the list of files read (repeated exploration goes first).
 */

/** The twelve section slots, in prompt order (headings come from the prompt file). */
export const SECTION_KEYS = [
  'goal',
  'restrictions',
  'completed',
  'running',
  'failed',
  'notRun',
  'commands',
  'filesRead',
  'filesModified',
  'errors',
  'pending',
  'plan',
] as const;
export type SectionKey = (typeof SECTION_KEYS)[number];

const PRIORITY: Record<SectionKey, number> = {
  goal: 100,
  restrictions: 90,
  failed: 90,
  filesModified: 80,
  pending: 80,
  running: 75,
  errors: 60,
  plan: 60,
  notRun: 55,
  completed: 50,
  commands: 30,
  filesRead: 20,
};

interface Item {
  section: SectionKey;
  text: string;
  priority: number;
  /** Recency: larger is newer; decides which items survive inside one priority. */
  rank: number;
  /** Display position inside the section. */
  order: number;
}

/** Options of {@link renderSummary}. */
export interface RenderOptions {
  maxOutputTokens: number;
  estimator: Estimator;
  /** Heading text per slot, in {@link SECTION_KEYS} order (from the prompt file). */
  headings: readonly string[];
  /** Cap for the goal statement (default 600 tokens). */
  goalTokens?: number;
}

/** A rendered summary. */
export interface RenderedSummary {
  text: string;
  /** `length` only when not even the headings fit. */
  finishReason: 'stop' | 'length';
  /** Items left out for the budget. */
  omitted: number;
}

const MAX_COMMAND_CHARS = 500;

// Two goal statements starting with this many identical characters are the same request.
const SAME_GOAL_CHARS = 200;

/** A command as an inline code span: exact when short and single-line, else its first line. */
export function formatCommand(command: string): string {
  const lines = command.split('\n');
  let shown = command;
  if (lines.length > 1 || command.length > MAX_COMMAND_CHARS) {
    const first =
      lines[0].length > MAX_COMMAND_CHARS ? `${headUnits(lines[0], MAX_COMMAND_CHARS)}…` : lines[0];
    shown = lines.length > 1 ? `${first} … [+${lines.length - 1} more lines]` : first;
  }
  const ticks = shown.includes('`') ? '``' : '`';
  const pad = ticks.length > 1 ? ' ' : '';
  return `${ticks}${pad}${shown}${pad}${ticks}`;
}

function exitText(status: string, exitCode: number | null): string {
  if (status === 'running')
    return exitCode === null ? 'still running' : `still running (exit ${exitCode} so far)`;
  if (status === 'not-run') return 'not run';
  return exitCode === null ? `${status} (no exit code recorded)` : `exit ${exitCode}`;
}

function times(n: number): string {
  return n > 1 ? ` (×${n})` : '';
}

function commandLine(c: CommandFact): string {
  return `- ${formatCommand(c.command)} → ${exitText(c.status, c.exitCode)}${times(c.runs)}`;
}

/** Builds all candidate items from the facts. */
function itemsOf(facts: SessionFacts, options: RenderOptions): Item[] {
  const items: Item[] = [];
  let order = 0;
  const add = (section: SectionKey, text: string, rank: number, priority = PRIORITY[section]) =>
    items.push({ section, text, rank, priority, order: order++ });

  const carriedBySlot = new Map<SectionKey, string[]>();
  SECTION_KEYS.forEach((key, i) => {
    const lines = facts.carried.get(options.headings[i]);
    if (lines && lines.length > 0) carriedBySlot.set(key, lines);
  });
  // Carried lines come from an earlier checkpoint: older than anything in this fork.
  const carry = (key: SectionKey) =>
    (carriedBySlot.get(key) ?? []).forEach((l, i, all) => add(key, l, -all.length + i));

  carry('goal');
  if (facts.goal !== '') {
    const goal = previewText(facts.goal, options.goalTokens ?? 600, options.estimator).replace(/\n+/g, ' ');
    // A retained copy of the first request restates the carried goal: say it once.
    const head = goal.slice(0, SAME_GOAL_CHARS);
    const restated = (carriedBySlot.get('goal') ?? []).some(
      (l) => l.replace(/^-\s*/, '').slice(0, SAME_GOAL_CHARS) === head,
    );
    if (!restated)
      add('goal', `- ${carriedBySlot.has('goal') ? 'Latest request: ' : ''}${goal}`, Infinity, PRIORITY.goal);
  }
  for (const r of facts.laterRequests) add('goal', `- Later request: ${r.text}`, r.last, 70);

  carry('restrictions');
  for (const r of facts.restrictions) add('restrictions', `- "${r.text}"`, r.last);

  carry('completed');
  for (const c of facts.commands
    .filter((c) => c.isCheck && c.status === 'completed')
    .sort((a, b) => a.last - b.last))
    add('completed', commandLine(c), c.last);

  carry('running');
  for (const c of facts.commands.filter((c) => c.status === 'running'))
    add('running', commandLine(c), c.last);

  carry('failed');
  const failures = facts.commands.filter((c) => c.everFailed).sort((a, b) => a.last - b.last);
  for (const c of failures) {
    const code = c.failedExitCode === null ? 'failed' : `exit ${c.failedExitCode}`;
    const later = c.status !== 'failed' ? `; latest run: ${exitText(c.status, c.exitCode)}` : '';
    const why = c.errorLine ? `: ${c.errorLine}` : '';
    add('failed', `- ${formatCommand(c.command)} → ${code}${why}${times(c.runs)}${later}`, c.last);
  }
  const seenFailures = new Set<string>();
  for (const f of facts.toolFailures) {
    const line = `- ${f.tool} ${f.target}: ${f.message}`;
    if (seenFailures.has(line)) continue;
    seenFailures.add(line);
    add('failed', line, f.last);
  }

  carry('notRun');
  for (const c of facts.commands.filter((c) => c.status === 'not-run')) add('notRun', commandLine(c), c.last);

  carry('commands');
  for (const c of [...facts.commands].sort((a, b) => a.last - b.last))
    add('commands', commandLine(c), c.last);

  carry('filesRead');
  for (const f of [...facts.filesRead].sort((a, b) => a.last - b.last))
    add('filesRead', `- ${f.text}${times(f.count)}`, f.last);

  carry('filesModified');
  for (const f of [...facts.filesModified].sort((a, b) => a.last - b.last))
    add('filesModified', `- ${f.text}`, f.last);

  carry('errors');
  for (const e of [...facts.errors].sort((a, b) => a.last - b.last))
    add('errors', `- ${e.text}${times(e.count)}`, e.last);

  carry('pending');
  for (const p of facts.pending) add('pending', `- ${p.text}`, p.last);

  carry('plan');
  facts.plan.forEach((p, i) => add('plan', `- ${p}`, 1e9 + i, p.startsWith('[completed]') ? 40 : 65));
  if (facts.lastAssistantNote !== undefined) {
    const noteText = previewText(facts.lastAssistantNote, 200, options.estimator).replace(/\s+/g, ' ');
    add('plan', `- Last assistant message (its own claim, not evidence): ${noteText}`, 1e9 - 1, 58);
  }
  return items;
}

function render(items: Item[], kept: Set<Item>, headings: readonly string[]): string {
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
export function fullTemplateFloorTokens(headings: readonly string[], est: Estimator): number {
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
