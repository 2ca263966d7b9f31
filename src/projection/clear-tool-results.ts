import type { Estimator } from '../estimate/estimator.js';
import { tokensPerMessage } from './tokens-per-message.js';
import type { Message, ToolCall } from '../messages/message.js';
import { RECALL_TOOL_NAME } from './recall-ids.js';
import { resolveEvidenceBudget } from './budgets.js';
import { clearInSteps } from './cache-aware.js';
import { completeClearingPolicy, type ClearingPolicy } from './clearing-policy.js';
import type { ProjectionDiagnostics, ToolClearingStats } from './diagnostics.js';
import { analyzePairing, type Pairing } from './pairing.js';
import { countProtected, evidenceWindow, type EvidenceWindow } from './protection.js';
import { clearInputsOfReplaced } from './clear-inputs.js';
import { stubResult } from './stubs.js';

/** Options of the clearing pass. */
export interface ClearToolResultsOptions {
  estimator: Estimator;
  policy?: Partial<ClearingPolicy>;
  /** Effective trigger; defaults to `policy.triggerTokens` (at least 1). */
  localTrigger?: number;
  /** Evidence window budget; defaults to `floor(localTrigger × policy.evidenceWindowRatio)` (ratio 0.5 = `/ 2`). */
  evidenceBudget?: number;
  /** `analyzePairing(messages)` when the caller already computed it (saves a linear pass per request). */
  pairing?: Pairing;
  /** Call ids whose results the request sent last had cleared: cleared again, whatever the rules say. */
  keepCleared?: ReadonlySet<string>;
}

/** Output of a clearing pass: the projected messages (the input array itself when nothing changed). */
export interface ClearToolResultsResult {
  messages: readonly Message[];
  diagnostics: ProjectionDiagnostics;
}

// Memoized replacements (stubs here, cleared inputs in clear-inputs.ts) keep object identity across requests, so the estimator's per-message
// cache (and any downstream cache) hits on every turn instead of re-estimating fresh copies.
// Like the estimator, this treats messages as immutable values.
const stubCache = new WeakMap<Message, { tool: string; input: string | undefined; stub: Message }>();

/** How many newer tool batches a recall result outlives before it may be cleared. */
export const RECALL_KEPT_BATCHES = 3;
const NONE: ReadonlySet<string> = new Set();

/**
 * Local tool-result clearing on a request projection. When the history reaches the
 * trigger, every tool result outside the protected set (evidence window ∪ count rule) is
 * replaced by a short JSON stub if that is smaller, and large inputs of the replaced calls
 * become a placeholder. Never mutates its input; unchanged messages are reused as is.
 */
export function clearOldToolResultsWithRecentBatches(
  messages: readonly Message[],
  opts: ClearToolResultsOptions,
): ClearToolResultsResult {
  const policy = completeClearingPolicy(opts.policy);
  const localTrigger = opts.localTrigger ?? Math.max(1, policy.triggerTokens);
  const evidenceBudget =
    opts.evidenceBudget ?? resolveEvidenceBudget(localTrigger, policy.evidenceWindowRatio);
  const est = opts.estimator;
  const tokens = tokensPerMessage(messages, est);
  const total = sum(tokens);
  const base = unchangedDiagnostics(total, localTrigger, evidenceBudget);
  const pairing = opts.pairing ?? analyzePairing(messages);
  const keep = opts.keepCleared ?? NONE;
  const carried = (i: number) => keep.size > 0 && keep.has(messages[i].toolCallId ?? '');

  // Results the last request had cleared stay cleared, even where the rules would clear nothing.
  const carries = keep.size > 0 && messages.some((_, i) => carried(i));
  if (messages.length === 0 || (!carries && (!policy.enabled || total < localTrigger))) {
    const reason = !policy.enabled
      ? 'clearing off (toolResultClearing.enabled is false, as in the default compactor preset)'
      : `below trigger: ${total} < ${localTrigger} tokens`;
    const perTool = toolStats(messages, pairing, tokens, () => false);
    return { messages, diagnostics: { ...base, reason, perTool } };
  }

  const evidence = evidenceWindow(pairing, tokens, evidenceBudget);
  const counted = countProtected(messages, pairing, policy);
  const protectedBatch = evidence.batches.slice();
  counted.batches.forEach((p, b) => (protectedBatch[b] ||= p));
  const isProtected = (i: number): boolean => {
    const b = pairing.batchOf[i];
    return b >= 0 ? protectedBatch[b] === 1 : counted.orphans.has(i);
  };

  const onlyCarried = noStepCanFire(policy, total);
  const found = clearingCandidates(messages, pairing, tokens, est, isProtected, carried, onlyCarried);
  // Results the last request had cleared stay cleared; the rules decide about the others.
  const stepped = new Set(
    policy.enabled ? clearInSteps(found.candidates, found.savings, policy.clearAtLeast) : [],
  );
  const replaced = found.candidates.filter((i) => stepped.has(i) || carried(i));
  const stubbed = replaceWithStubs(messages, found, replaced);
  const out = stubbed?.out ?? null;
  const inputs = out ? clearInputsOfReplaced(messages, out, pairing, replaced, policy, est) : null;
  // Every other message is the input's own object, so the sum changes by exactly what was saved.
  const projectedTokens = total - (stubbed?.savedTokens ?? 0) - (inputs?.savedTokens ?? 0);
  const result = out ?? messages;
  const protectedBatches = protectedBatch.reduce((n, p) => n + p, 0);
  return {
    messages: result,
    diagnostics: {
      ...base,
      projectedTokens,
      clearedResults: replaced.length,
      protectedBatches,
      protectedResults: found.protectedResults,
      clearedInputs: inputs?.cleared ?? 0,
      clearingApplied: true,
      evidenceBatches: evidence.count,
      evidenceTokens: evidence.tokens,
      reason: appliedReason(total, localTrigger, evidence, evidenceBudget, protectedBatches, replaced.length),
      perTool: toolStats(messages, pairing, tokens, (i) => stubbed?.isReplaced[i] === 1),
    },
  };
}

/**
 * No clearing step fires while the whole history is below `clearAtLeast` (a stub saves less than
 * its result's tokens), nor with clearing off: then only carried results are replaced, and only
 * theirs need a stub (between steps on a long history, stubs were most of the pass).
 */
function noStepCanFire(policy: ClearingPolicy, total: number): boolean {
  return !policy.enabled || (policy.clearAtLeast > 0 && total < policy.clearAtLeast);
}

/** Diagnostics of a pass that changed nothing (yet). */
function unchangedDiagnostics(total: number, localTrigger: number, evidenceBudget: number) {
  return {
    originalTokens: total,
    projectedTokens: total,
    clearedResults: 0,
    protectedBatches: 0,
    protectedResults: 0,
    clearedInputs: 0,
    localTrigger,
    evidenceBudget,
    clearingApplied: false,
    evidenceBatches: 0,
    evidenceTokens: 0,
  };
}

/**
 * Unprotected tool results whose stub is smaller, with the tokens each stub saves and the stub
 * itself (so the replacement pass does not look it up again); also counts protected results.
 * Carried results are never protected; with `onlyCarried` the others are not looked at further.
 */
function clearingCandidates(
  messages: readonly Message[],
  pairing: Pairing,
  tokens: readonly number[],
  est: Estimator,
  isProtected: (i: number) => boolean,
  carried: (i: number) => boolean,
  onlyCarried: boolean,
): { candidates: number[]; savings: number[]; stubs: Message[]; protectedResults: number } {
  const candidates: number[] = [];
  const savings: number[] = [];
  const stubs: Message[] = [];
  let protectedResults = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role !== 'tool') continue;
    const isCarried = carried(i);
    if ((isProtected(i) && !isCarried) || isFreshRecall(messages, pairing, i)) {
      protectedResults++;
      continue;
    }
    if (onlyCarried && !isCarried) continue; // it cannot be replaced: no stub needed
    const stub = memoStub(messages, pairing, i);
    const saved = tokens[i] - est.message(stub);
    if (saved <= 0) continue; // small results stay unchanged: a stub must be smaller
    candidates.push(i);
    savings.push(saved);
    stubs.push(stub);
  }
  return { candidates, savings, stubs, protectedResults };
}

/**
 * A copy of `messages` with the `replaced` candidates swapped for their stubs (null when none),
 * the tokens that saves, and a flag per message index marking the replaced ones.
 */
function replaceWithStubs(
  messages: readonly Message[],
  found: { candidates: number[]; savings: number[]; stubs: Message[] },
  replaced: readonly number[],
): { out: Message[]; savedTokens: number; isReplaced: Uint8Array } | null {
  if (replaced.length === 0) return null;
  const out = messages.slice();
  const isReplaced = new Uint8Array(messages.length);
  let savedTokens = 0;
  // `replaced` is a subset of the candidates in the same order: walk both for each one's stub.
  for (let k = 0, c = 0; k < replaced.length; k++, c++) {
    while (found.candidates[c] !== replaced[k]) c++;
    out[replaced[k]] = found.stubs[c];
    isReplaced[replaced[k]] = 1;
    savedTokens += found.savings[c];
  }
  return { out, savedTokens, isReplaced };
}

/**
 * The plain clearing API: {@link clearOldToolResultsWithRecentBatches} with
 * `keepRecentToolBatches = 0`; the evidence window and the keep-tool-uses rule still apply.
 */
export function clearOldToolResults(
  messages: readonly Message[],
  opts: ClearToolResultsOptions,
): ClearToolResultsResult {
  return clearOldToolResultsWithRecentBatches(messages, {
    ...opts,
    policy: { ...opts.policy, keepRecentToolBatches: 0 },
  });
}

function sum(values: readonly number[]): number {
  let t = 0;
  for (const v of values) t += v;
  return t;
}

/** The call a result answers, when it is paired. */
function callOf(messages: readonly Message[], pairing: Pairing, i: number): ToolCall | undefined {
  const b = pairing.batchOf[i];
  if (b < 0) return undefined;
  const batch = pairing.batches[b];
  const pos = batch.resultCallPositions[batch.resultIndices.indexOf(i)];
  return messages[batch.assistantIndex].toolCalls?.[pos];
}

function toolNameOf(messages: readonly Message[], pairing: Pairing, i: number): string {
  return messages[i].toolName || callOf(messages, pairing, i)?.name || 'tool';
}

function memoStub(messages: readonly Message[], pairing: Pairing, i: number): Message {
  const m = messages[i];
  const tool = toolNameOf(messages, pairing, i);
  const input = callOf(messages, pairing, i)?.arguments;
  const hit = stubCache.get(m);
  if (hit && hit.tool === tool && hit.input === input) return hit.stub;
  const stub = stubResult(m, tool, input);
  stubCache.set(m, { tool, input, stub });
  return stub;
}

/**
 * A recall result stays whole while fewer than {@link RECALL_KEPT_BATCHES} tool batches
 * follow it: clearing what the model just asked for would send it asking again.
 */
function isFreshRecall(messages: readonly Message[], pairing: Pairing, i: number): boolean {
  if (toolNameOf(messages, pairing, i) !== RECALL_TOOL_NAME) return false;
  const b = pairing.batchOf[i];
  return b >= 0 && pairing.batches.length - 1 - b < RECALL_KEPT_BATCHES;
}

function appliedReason(
  total: number,
  trigger: number,
  evidence: EvidenceWindow,
  budget: number,
  protectedBatches: number,
  cleared: number,
): string {
  // The reason a report prints, one part per clearing rule in play.
  const parts = [`trigger reached: ${total} ≥ ${trigger} tokens`];
  parts.push(`evidence window kept ${evidence.count} batch(es), ${evidence.tokens} of ${budget} tokens`);
  if (evidence.newestOversized)
    parts.push(
      `newest batch (${evidence.stoppedAt} tokens) alone exceeds the evidence budget; left to compaction`,
    );
  parts.push(`count rule brought protection to ${protectedBatches} batch(es)`);
  parts.push(cleared > 0 ? `cleared ${cleared} result(s)` : 'nothing left to clear');
  return parts.join('; ');
}

function toolStats(
  messages: readonly Message[],
  pairing: Pairing,
  tokens: readonly number[],
  wasCleared: (i: number) => boolean,
): ToolClearingStats[] {
  const byTool = new Map<string, ToolClearingStats>();
  for (let i = 0; i < messages.length; i++) {
    if (messages[i].role !== 'tool') continue;
    const tool = toolNameOf(messages, pairing, i);
    let s = byTool.get(tool);
    if (!s) byTool.set(tool, (s = { tool, cleared: 0, kept: 0, clearedTokens: 0, keptTokens: 0 }));
    if (wasCleared(i)) {
      s.cleared++;
      s.clearedTokens += tokens[i];
    } else {
      s.kept++;
      s.keptTokens += tokens[i];
    }
  }
  return [...byTool.values()].sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
}
