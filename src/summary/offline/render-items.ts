import type { Estimator } from '../../estimate/estimator.js';
import { headUnits } from '../../core/text.js';
import { userIds } from '../ids.js';
import { previewText } from '../preview.js';
import { foldKey, type CommandFact, type SessionFacts } from './facts.js';
import type { SourceFacts } from './output-facts.js';
import { isExplorationCommand } from './shell.js';

/**
 * The candidate lines of a full summary, each with a priority and a recency rank, built from
 * the extracted facts and the sections an earlier summary carried forward. `render.ts` keeps
 * as many as the budget allows.
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
// Key facts of tool output: the first few of each result outrank the command log; the rest
// of them compete with it on recency, and outrank the plain list of files read.
const FACTS_PRIORITY = 45;
const MORE_FACTS_PRIORITY = 30;
const TOP_FACTS = 6;
const EXPLORATION_PRIORITY = 15;
const LATER_REQUEST_PRIORITY = 70;
/** How many of the newest commands that changed something outrank output facts, and at what priority. */
const RECENT_COMMANDS = 20;
const RECENT_COMMAND_PRIORITY = 50;

/** One candidate line. */
export interface Item {
  section: SectionKey;
  text: string;
  priority: number;
  /** Recency: larger is newer; decides which items survive inside one priority. */
  rank: number;
  /** Display position inside the section. */
  order: number;
}

/** Options of `renderSummary`. */
export interface RenderOptions {
  maxOutputTokens: number;
  estimator: Estimator;
  /** Heading text per slot, in {@link SECTION_KEYS} order (from the prompt file). */
  headings: readonly string[];
  /** Cap for the goal statement (default 600 tokens, at most 30 % of the output budget). */
  goalTokens?: number;
}

/** The goal's default cap: 600 tokens, but never most of a small budget (the checks and commands need room too). */
function goalCap(options: RenderOptions): number {
  return options.goalTokens ?? Math.min(600, Math.max(150, Math.floor(options.maxOutputTokens * 0.3)));
}

const MAX_COMMAND_CHARS = 500;
const LAST_NOTE = '- Last assistant message (its own claim, not evidence):';

// Two goal statements starting with this many identical characters are the same request.
const SAME_GOAL_CHARS = 200;

/** Text as an inline code span (exact: the span holds it verbatim). */
export function codeSpan(text: string): string {
  const ticks = text.includes('`') ? '``' : '`';
  const pad = ticks.length > 1 ? ' ' : '';
  return `${ticks}${pad}${text}${pad}${ticks}`;
}

/** A command as an inline code span: exact when short and single-line, else its first line. */
export function formatCommand(command: string): string {
  const lines = command.split('\n');
  let shown = command;
  if (lines.length > 1 || command.length > MAX_COMMAND_CHARS) {
    const first =
      lines[0].length > MAX_COMMAND_CHARS ? `${headUnits(lines[0], MAX_COMMAND_CHARS)}…` : lines[0];
    shown = lines.length > 1 ? `${first} … [+${lines.length - 1} more lines]` : first;
  }
  return codeSpan(shown);
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

function failureLine(c: CommandFact): string {
  const code = c.failedExitCode === null ? 'failed' : `exit ${c.failedExitCode}`;
  const later = c.status !== 'failed' ? `; latest run: ${exitText(c.status, c.exitCode)}` : '';
  const why = c.errorLine ? `: ${c.errorLine}` : '';
  return `- ${formatCommand(c.command)} → ${code}${why}${times(c.runs)}${later}`;
}

/** A carried line keeps the priority of its kind (output facts are worth more than the list of files read). */
function carriedPriority(section: SectionKey, line: string): number {
  if (section === 'filesRead' && / also showed: /.test(line)) return MORE_FACTS_PRIORITY;
  if (section === 'filesRead' && / showed: /.test(line)) return FACTS_PRIORITY;
  if (section === 'goal' && line.startsWith('- Later request: ')) return LATER_REQUEST_PRIORITY;
  return PRIORITY[section];
}

type Add = (section: SectionKey, text: string, rank: number, priority?: number) => void;

function addGoal(facts: SessionFacts, options: RenderOptions, carried: readonly string[], add: Add): void {
  // After an earlier summary the goal is carried; the newest request is what the user wants now.
  const latest =
    carried.length > 0 && facts.laterRequests.length > 0
      ? facts.laterRequests.reduce((a, b) => (b.last > a.last ? b : a))
      : undefined;
  if (facts.goal !== '') {
    const goal = previewText(facts.goal, goalCap(options), options.estimator).replace(/\n+/g, ' ');
    // A retained copy of the first request restates the carried goal: say it once.
    const head = goal.slice(0, SAME_GOAL_CHARS);
    const restated = carried.some((l) => l.replace(/^-\s*/, '').slice(0, SAME_GOAL_CHARS) === head);
    if (!restated && carried.length === 0) add('goal', `- ${goal}`, Infinity);
    else if (!restated && latest === undefined) add('goal', `- Latest request: ${goal}`, Infinity);
    else if (!restated) add('goal', `- Later request: ${goal}`, 0, LATER_REQUEST_PRIORITY);
    // Ids the shortened goal cut (a base commit, an issue number) are named after it.
    const cutIds = userIds(facts.goal).filter((id) => !goal.includes(id));
    if (!restated && cutIds.length > 0) add('goal', `- Ids in the request: ${cutIds.join(', ')}`, Infinity);
  }
  for (const r of facts.laterRequests)
    if (r === latest) add('goal', `- Latest request: ${r.text}${times(r.count)}`, Infinity);
    else add('goal', `- Later request: ${r.text}${times(r.count)}`, r.last, LATER_REQUEST_PRIORITY);
}

function addChecks(facts: SessionFacts, add: Add): void {
  const byAge = [...facts.commands].sort((a, b) => a.last - b.last);
  for (const c of byAge.filter((c) => c.isCheck && c.status === 'completed'))
    add('completed', commandLine(c), c.last);
  for (const c of facts.commands.filter((c) => c.status === 'running'))
    add('running', commandLine(c), c.last);
  for (const c of byAge.filter((c) => c.everFailed)) add('failed', failureLine(c), c.last);
  for (const f of facts.toolFailures) add('failed', `- ${f.tool} ${f.target}: ${f.message}`, f.last);
  for (const c of facts.commands.filter((c) => c.status === 'not-run')) add('notRun', commandLine(c), c.last);
  // Rule 5: successful exploration is compressed first; what it showed is kept as output facts.
  // The newest commands that changed something outrank output facts: the next turn builds on them.
  const acting = byAge.filter((c) => !(c.status === 'completed' && isExplorationCommand(c.command)));
  const recent = new Set(acting.slice(-RECENT_COMMANDS));
  for (const c of byAge)
    add(
      'commands',
      commandLine(c),
      c.last,
      recent.has(c)
        ? RECENT_COMMAND_PRIORITY
        : c.status === 'completed' && isExplorationCommand(c.command)
          ? EXPLORATION_PRIORITY
          : PRIORITY.commands,
    );
}

/** A result's key facts: its first few as one line, the rest as a second, less valued line. */
function addOutputFacts(sources: readonly SourceFacts[], add: Add): void {
  for (const s of sources) {
    const spans = s.facts.map(codeSpan);
    add('filesRead', `- ${s.label} showed: ${spans.slice(0, TOP_FACTS).join(' · ')}`, s.last, FACTS_PRIORITY);
    if (spans.length > TOP_FACTS)
      add(
        'filesRead',
        `- ${s.label} also showed: ${spans.slice(TOP_FACTS).join(' · ')}`,
        s.last,
        MORE_FACTS_PRIORITY,
      );
  }
}

function addFilesAndRest(facts: SessionFacts, options: RenderOptions, add: Add): void {
  const byAge = <T extends { last: number }>(xs: readonly T[]) => [...xs].sort((a, b) => a.last - b.last);
  for (const f of byAge(facts.filesRead)) add('filesRead', `- ${f.text}${times(f.count)}`, f.last);
  addOutputFacts(facts.outputFacts, add);
  for (const f of byAge(facts.filesModified)) add('filesModified', `- ${f.text}`, f.last);
  for (const e of byAge(facts.errors)) add('errors', `- ${e.text}${times(e.count)}`, e.last);
  for (const p of facts.pending) add('pending', `- ${p.text}`, p.last);
  facts.plan.forEach((p, i) => add('plan', `- ${p}`, 1e9 + i, p.startsWith('[completed]') ? 40 : 65));
  if (facts.lastAssistantNote !== undefined) {
    const noteText = previewText(facts.lastAssistantNote, 200, options.estimator).replace(/\s+/g, ' ');
    add('plan', `${LAST_NOTE} ${noteText}`, 1e9 - 1, 58);
  }
}

/** The key two lines share when they say the same thing (counts and, for requests, numbers aside). */
function sameKey(it: Item): string {
  // Only the newest assistant message is worth quoting; carried ones are older claims.
  if (it.section === 'plan' && it.text.startsWith(LAST_NOTE)) return `plan\u0000${LAST_NOTE}`;
  const bare = it.text.replace(/ \(×\d+\)$/, '').replace(/^- (?:Latest request|Later request): /, '- ');
  return `${it.section}\u0000${it.section === 'goal' || it.section === 'restrictions' ? foldKey(bare) : bare}`;
}

/**
 * Keeps one line of each kind per section, the newest: a fork that starts with an earlier
 * summary and still holds the messages it summarized would otherwise say everything twice.
 */
function withoutRepeats(items: readonly Item[]): Item[] {
  const newest = new Map<string, Item>();
  for (const it of items) {
    const k = sameKey(it);
    const seen = newest.get(k);
    if (!seen || it.rank >= seen.rank) newest.set(k, it);
  }
  const keep = new Set(newest.values());
  return items.filter((it) => keep.has(it));
}

/** Builds all candidate items from the facts, carried lines of an earlier summary first in each section. */
export function itemsOf(facts: SessionFacts, options: RenderOptions): Item[] {
  const bySection = new Map<SectionKey, Array<Omit<Item, 'order'>>>(SECTION_KEYS.map((k) => [k, []]));
  const add: Add = (section, text, rank, priority = PRIORITY[section]) =>
    bySection.get(section)?.push({ section, text, rank, priority });
  const carried = (key: SectionKey) => facts.carried.get(options.headings[SECTION_KEYS.indexOf(key)]) ?? [];
  // Carried lines come from an earlier checkpoint: older than anything in this fork.
  for (const key of SECTION_KEYS)
    carried(key).forEach((l, i, all) => add(key, l, -all.length + i, carriedPriority(key, l)));
  addGoal(facts, options, carried('goal'), add);
  for (const r of facts.restrictions) add('restrictions', `- "${r.text}"`, r.last);
  addChecks(facts, add);
  addFilesAndRest(facts, options, add);
  let order = 0;
  const items = SECTION_KEYS.flatMap((k) => bySection.get(k) ?? []).map((it) => ({ ...it, order: order++ }));
  return withoutRepeats(items);
}
