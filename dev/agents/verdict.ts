import { MAX_RECALL_ROUNDS } from '../../src/serve/recall-loop.js';
import type { AgentRow } from './agent-row.js';
import type { CellResult } from './cell.js';

/*
 * What each cell of the matrix must hold, as one list of what it failed (empty: it held), and
 * the matrix as a table.
 */

/**
 * A clearing step (a prefix change without a summary) must free at least this share of the room
 * the window leaves for history: the window less the agent's own fixed part (system prompt, tools,
 * task) and the largest answer's room the proxy keeps (a quarter of the window). Where the fixed
 * part takes most of a small window, one file fills that room and a step every turn is all a
 * proxy can do; a step that frees little of a large room is the proxy's fault.
 */
export const MIN_STEP_SHARE = 0.25;

/** The tokens a step must free at least in a cell (see {@link MIN_STEP_SHARE}). */
function leastStep(window: number, direct: CellResult | undefined): number {
  const room = window - (direct?.fixedPart ?? 0) - Math.floor(window / 4);
  return Math.max(0, room) * MIN_STEP_SHARE;
}

/**
 * Upstream tokens through the proxy may exceed the direct run's by this share: what differs
 * from run to run in what the agent itself writes (random ids, times) and nothing else.
 */
export const RUN_NOISE = 0.005;

const n = (x: number) => x.toLocaleString('en-US');

/** A table of the matrix: its headers, rows, and the notes under it. */
export interface MatrixTable {
  headers: string[];
  rows: Array<Array<string | number>>;
  notes: string[];
}

/** What every cell must hold: exit 0 and its answer, nothing refused or over the window, pairing and task intact. */
function commonFailures(cell: CellResult, noAnswer: string): string[] {
  const out: string[] = [];
  if (cell.exit !== 0) out.push(cell.signal ? `killed (${cell.signal})` : `exit ${cell.exit}`);
  if (!cell.answered) out.push(noAnswer);
  if (cell.refusals > 0) out.push(`${cell.refusals} refused by the proxy`);
  if (cell.overWindow > 0) out.push(`${cell.overWindow} over the window`);
  if (cell.badPairing > 0) out.push(`pairing broken in ${cell.badPairing}`);
  if (cell.taskMissing > 0) out.push(`task missing in ${cell.taskMissing}`);
  return out;
}

/** Clearing steps: prefix changes the proxy made with no summary call before them (the agent's own changes aside). */
const clearingSteps = (cell: CellResult) => cell.breaks.filter((b) => !b.afterSummary && !b.agentOwn);

/** Prefix changes the agent made itself (the proxy passed them on as they came). */
const ownChanges = (cell: CellResult) => cell.breaks.filter((b) => b.agentOwn).length;

/**
 * The highest ratio, over the turns, of the tokens sent upstream so far to the direct run's at
 * the same turn (undefined when the two runs took a different number of turns).
 */
export function worstRunningShare(
  cell: Pick<CellResult, 'tally'>,
  direct: Pick<CellResult, 'tally'> | undefined,
): number | undefined {
  if (!direct || direct.tally.length !== cell.tally.length || cell.tally.length === 0) return undefined;
  return Math.max(...cell.tally.map((t, i) => t / Math.max(1, direct.tally[i])));
}

/** What a cell through the proxy failed, given the agent's direct run. */
export function cellFailures(cell: CellResult, direct: CellResult | undefined): string[] {
  const out = commonFailures(cell, 'no final answer');
  const window = cell.spec.window ?? 0;
  const misrouted = cell.misses.filter((m) => !m.startsWith('HEAD '));
  if (misrouted.length > 0) out.push(`sent where no provider serves: ${misrouted.join(', ')}`);
  const least = leastStep(window, direct);
  // A step that left no older result uncleared freed all there was.
  const small = clearingSteps(cell).filter((b) => b.freed < least && !b.clearedAll);
  if (small.length > 0)
    out.push(
      `${small.length} clearing steps freed under ${MIN_STEP_SHARE * 100} % of the room for history (${n(least)}; least ${n(Math.min(...small.map((b) => b.freed)))})`,
    );
  if (direct?.answered && cell.upstreamTokens > direct.upstreamTokens * (1 + RUN_NOISE))
    out.push(`upstream ${n(cell.upstreamTokens)} > direct ${n(direct.upstreamTokens)} tokens`);
  const running = worstRunningShare(cell, direct);
  if (running !== undefined && running > 1 + RUN_NOISE)
    out.push(`the running tally went to ${Math.round(running * 100)} % of the direct run's at one turn`);
  // A summary call must buy several turns.
  if (cell.summaries > Math.ceil(cell.loopTurns / 3))
    out.push(`${cell.summaries} summary calls in ${cell.loopTurns} turns (more than one per 3)`);
  if (cell.loopTurns === 0 && cell.agentRequests === 0) out.push('no request reached the model');
  // A window that holds the whole direct run needs no change to any request.
  if (direct && direct.largest <= window && cell.unchanged < cell.forwarded)
    out.push(
      `${cell.forwarded - cell.unchanged} of ${cell.forwarded} requests changed though the window holds them`,
    );
  return out;
}

const running = (c: CellResult, direct: CellResult | undefined): string => {
  const share = worstRunningShare(c, direct);
  return share === undefined ? '—' : `${Math.round(share * 100)} %`;
};

/** The matrix as table rows (the direct run first in each agent's rows), and the notes under it. */
export function matrixTable(rows: readonly AgentRow[]): MatrixTable {
  const headers = [
    'agent',
    'window',
    'exit',
    'answer',
    'refusals',
    'largest / window',
    'over window',
    'pairing, task',
    'unchanged',
    'prefix kept',
    'clearing steps (least freed)',
    'summaries / turns',
    'upstream tokens (vs direct)',
    'worst running tally',
    'wall s',
    'holds',
  ];
  const table: Array<Array<string | number>> = [];
  const notes: string[] = [];
  for (const row of rows) {
    if (row.error) {
      table.push([row.agent, ...Array<string>(headers.length - 2).fill('—'), 'not run']);
      notes.push(`${row.agent}: ${row.error}`);
      continue;
    }
    const cells = [...(row.direct ? [row.direct] : []), ...row.cells];
    for (const c of cells) {
      const direct = c.spec.window === null;
      const steps = clearingSteps(c);
      const failures = direct ? [] : cellFailures(c, row.direct);
      const vs =
        direct || !row.direct
          ? ''
          : ` (${Math.round((100 * c.upstreamTokens) / Math.max(1, row.direct.upstreamTokens))} %)`;
      table.push([
        c.label,
        direct ? 'direct' : `${c.spec.window! / 1000}k`,
        c.signal ?? String(c.exit),
        c.answered ? 'yes' : 'NO',
        c.refusals,
        direct ? n(c.largest) : `${n(c.largest)} / ${n(c.spec.window!)}`,
        c.overWindow,
        c.badPairing + c.taskMissing === 0 ? 'ok' : `${c.badPairing} / ${c.taskMissing} bad`,
        direct ? '' : `${c.unchanged}/${c.forwarded}`,
        `${c.prefixKept}/${c.prefixPairs}${ownChanges(c) > 0 ? ` (+${ownChanges(c)} agent's own)` : ''}`,
        steps.length === 0 ? '0' : `${steps.length} (${n(Math.min(...steps.map((b) => b.freed)))})`,
        `${c.summaries} / ${c.loopTurns}`,
        `${n(c.upstreamTokens)}${vs}`,
        direct ? '' : running(c, row.direct),
        Math.round(c.wallSeconds),
        direct ? 'baseline' : failures.length === 0 ? 'yes' : 'NO',
      ]);
      if (failures.length > 0) notes.push(`${c.label} at ${c.spec.window! / 1000}k: ${failures.join('; ')}.`);
      if (c.recallOffer > 0)
        notes.push(
          `${c.label} at ${c.spec.window! / 1000}k: the proxy's recall tool added ${n(c.recallOffer)} tokens over ${c.forwarded} requests (left out of the upstream count).`,
        );
      if (c.refusalSample)
        notes.push(
          `${c.label} at ${direct ? 'direct' : `${c.spec.window! / 1000}k`} got: ${c.refusalSample}`,
        );
      if (c.exit !== 0 && c.stderrTail)
        notes.push(`${c.label} stderr: ${c.stderrTail.replace(/\s+/g, ' ').slice(0, 400)}`);
    }
    for (const s of row.skipped) notes.push(`${row.agent} at ${s.window / 1000}k not run: ${s.reason}.`);
  }
  return { headers, rows: table, notes };
}

/**
 * What a cell of the task that needs the past failed: the marker in the final answer, no loop
 * (at most the proxy's bound of recall rounds, and no recall call let through to the agent),
 * the tool list byte for byte the same in every request of the session with the recall tool in
 * each, and what every cell must hold (exit 0, nothing refused or over the window, pairing and
 * task intact).
 */
export function pastFailures(cell: CellResult): string[] {
  const out = commonFailures(cell, 'the marker is not in the final answer');
  if (cell.recallRounds > MAX_RECALL_ROUNDS)
    out.push(`${cell.recallRounds} recall calls (the bound is ${MAX_RECALL_ROUNDS})`);
  if (cell.recallLeaks > 0) out.push(`${cell.recallLeaks} agent requests carry a recall call it was given`);
  const { distinct, requests, offeringRecall } = cell.toolLists;
  if (distinct > 1) out.push(`${distinct} different tool lists over ${requests} requests`);
  if (offeringRecall < requests) out.push(`the recall tool in ${offeringRecall} of ${requests} requests`);
  return out;
}

/** The task that needs the past as table rows, and the notes under it. */
export function pastTable(rows: readonly AgentRow[]): MatrixTable {
  const headers = [
    'agent',
    'window',
    'exit',
    'marker answered',
    'first file cleared by then',
    'recall calls',
    'tool lists (requests)',
    'largest / window',
    'refusals, over window',
    'wall s',
    'holds',
  ];
  const table: Array<Array<string | number>> = [];
  const notes: string[] = [];
  for (const row of rows)
    for (const c of row.past ?? []) {
      const failures = pastFailures(c);
      const where = `${c.label} at ${c.spec.window! / 1000}k`;
      table.push([
        c.label,
        `${c.spec.window! / 1000}k`,
        c.signal ?? String(c.exit),
        c.answered ? 'yes' : 'NO',
        c.pastCleared ? 'yes' : 'no',
        c.recallRounds,
        `${c.toolLists.distinct} (${c.toolLists.requests})`,
        `${n(c.largest)} / ${n(c.spec.window!)}`,
        `${c.refusals}, ${c.overWindow}`,
        Math.round(c.wallSeconds),
        failures.length === 0 ? 'yes' : 'NO',
      ]);
      if (failures.length > 0) notes.push(`${where}: ${failures.join('; ')}.`);
      if (c.refusalSample) notes.push(`${where} got: ${c.refusalSample}`);
      if (c.exit !== 0 && c.stderrTail)
        notes.push(`${c.label} stderr: ${c.stderrTail.replace(/\s+/g, ' ').slice(0, 400)}`);
    }
  return { headers, rows: table, notes };
}
