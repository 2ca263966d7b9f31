import { createEstimator, TOOL_CALL_OVERHEAD, type Estimator } from '../estimate/estimator.js';
import { textOf, type History, type Role, type ToolCall } from '../messages/message.js';

/** One tool's row in the per-tool table. */
export interface ToolStats {
  tool: string;
  calls: number;
  results: number;
  /** Tokens of the calls' names and arguments, overheads included. */
  callTokens: number;
  /** Tokens of the result messages, overheads included. */
  resultTokens: number;
  /** Tokens of the largest single result of this tool. */
  largestResultTokens: number;
}

/** One of the largest tool results. */
export interface LargestResult {
  tool: string;
  callId: string;
  /** Index of the result message in the session. */
  index: number;
  tokens: number;
  chars: number;
}

/** Everything `compactor stats` reports about one session (stable field names for --json). */
export interface SessionStats {
  messages: number;
  byRole: Record<Role, number>;
  toolCalls: number;
  toolResults: number;
  /** Calls answered by a result (binding rule: most recent earlier unmatched call with the id). */
  pairedCalls: number;
  /** Calls with no result. */
  unmatchedCalls: number;
  /** Results that answer no earlier unmatched call (before their call, duplicate, unknown id). */
  orphanResults: number;
  /** Assistant messages with tool calls. */
  batches: number;
  /** Batches with more than one call. */
  parallelBatches: number;
  /** The most calls in one batch. */
  maxFanOut: number;
  tokens: {
    encoding: string;
    total: number;
    byRole: Record<Role, number>;
  };
  /** Top results by tokens (at most `topResults`, default 5). */
  largestResults: LargestResult[];
  /** Per-tool breakdown, largest result tokens first. */
  tools: ToolStats[];
}

/** Options of {@link computeSessionStats}. */
export interface StatsOptions {
  estimator?: Estimator;
  /** How many largest results to list (default 5). */
  topResults?: number;
}

const UNKNOWN_TOOL = '(unknown)';

interface Counts {
  toolCalls: number;
  toolResults: number;
  paired: number;
  orphans: number;
  batches: number;
  parallel: number;
  maxFanOut: number;
}

/** The running statistics of one tool, created on first use. */
function toolEntry(tools: Map<string, ToolStats>, name: string): ToolStats {
  let t = tools.get(name);
  if (!t)
    tools.set(
      name,
      (t = { tool: name, calls: 0, results: 0, callTokens: 0, resultTokens: 0, largestResultTokens: 0 }),
    );
  return t;
}

/** Counts one assistant message's calls and opens each for the result that answers it. */
function recordBatch(
  calls: readonly ToolCall[],
  s: Counts,
  open: Map<string, string[]>,
  tools: Map<string, ToolStats>,
  est: Estimator,
): void {
  if (calls.length === 0) return;
  s.batches++;
  if (calls.length > 1) s.parallel++;
  s.maxFanOut = Math.max(s.maxFanOut, calls.length);
  for (const c of calls) {
    s.toolCalls++;
    const t = toolEntry(tools, c.name);
    t.calls++;
    t.callTokens += TOOL_CALL_OVERHEAD + est.text(c.name) + est.text(c.arguments);
    const stack = open.get(c.id);
    if (stack) stack.push(c.name);
    else open.set(c.id, [c.name]);
  }
}

/** Computes session statistics. Pure: reads the messages, never changes them. */
export function computeSessionStats(history: History, opts: StatsOptions = {}): SessionStats {
  const est = opts.estimator ?? createEstimator();
  const byRole: Record<Role, number> = { system: 0, user: 0, assistant: 0, tool: 0 };
  const tokensByRole: Record<Role, number> = { system: 0, user: 0, assistant: 0, tool: 0 };
  const tools = new Map<string, ToolStats>();
  const open = new Map<string, string[]>(); // call id → names of unmatched calls, most recent last
  const results: LargestResult[] = [];
  const s: Counts = {
    toolCalls: 0,
    toolResults: 0,
    paired: 0,
    orphans: 0,
    batches: 0,
    parallel: 0,
    maxFanOut: 0,
  };
  const tool = (name: string): ToolStats => toolEntry(tools, name);
  history.forEach((m, index) => {
    byRole[m.role]++;
    const tokens = est.message(m);
    tokensByRole[m.role] += tokens;
    if (m.role === 'assistant') recordBatch(m.toolCalls ?? [], s, open, tools, est);
    if (m.role !== 'tool') return;
    s.toolResults++;
    const id = m.toolCallId ?? '';
    const name = open.get(id)?.pop();
    if (name !== undefined) s.paired++;
    else s.orphans++;
    const t = tool(name ?? m.toolName ?? UNKNOWN_TOOL);
    t.results++;
    t.resultTokens += tokens;
    t.largestResultTokens = Math.max(t.largestResultTokens, tokens);
    results.push({ tool: t.tool, callId: id, index, tokens, chars: textOf(m.content).length });
  });
  const top = opts.topResults ?? 5;
  results.sort((a, b) => b.tokens - a.tokens || a.index - b.index);
  return {
    messages: history.length,
    byRole,
    toolCalls: s.toolCalls,
    toolResults: s.toolResults,
    pairedCalls: s.paired,
    unmatchedCalls: s.toolCalls - s.paired,
    orphanResults: s.orphans,
    batches: s.batches,
    parallelBatches: s.parallel,
    maxFanOut: s.maxFanOut,
    tokens: {
      encoding: est.encoding,
      total: Object.values(tokensByRole).reduce((a, b) => a + b, 0),
      byRole: tokensByRole,
    },
    largestResults: results.slice(0, top),
    tools: [...tools.values()].sort(
      (a, b) => b.resultTokens - a.resultTokens || b.calls - a.calls || a.tool.localeCompare(b.tool),
    ),
  };
}
