import type { Estimator } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import { resolveEvidenceBudget } from './budgets.js';
import { clearInSteps } from './cache-aware.js';
import { completeClearingPolicy, type ClearingPolicy } from './clearing-policy.js';
import type { ProjectionDiagnostics, ToolClearingStats } from './diagnostics.js';
import { analyzePairing, type Pairing, type ToolBatch } from './pairing.js';
import { clearInputsOfReplaced } from './clear-inputs.js';
import { stubResult } from './stubs.js';

/** Options of the clearing pass. */
export interface ClearToolResultsOptions {
  estimator: Estimator;
  policy?: Partial<ClearingPolicy>;
  /** Effective trigger (B3); defaults to `policy.triggerTokens` (at least 1). */
  localTrigger?: number;
  /** Evidence window budget (B4); defaults to `floor(localTrigger × policy.evidenceWindowRatio)` (ratio 0.5 = `/ 2`). */
  evidenceBudget?: number;
  /** `analyzePairing(messages)` when the caller already computed it (saves a linear pass per request). */
  pairing?: Pairing;
}

/** Output of a clearing pass: the projected messages (the input array itself when nothing changed). */
export interface ClearToolResultsResult {
  messages: readonly Message[];
  diagnostics: ProjectionDiagnostics;
}

// Memoized replacements (stubs here, cleared inputs in clear-inputs.ts) keep object identity across requests, so the estimator's per-message
// cache (and any downstream cache) hits on every turn instead of re-estimating fresh copies.
// Like the estimator, this treats messages as immutable values.
const stubCache = new WeakMap<Message, { tool: string; stub: Message }>();

/**
 * Local tool-result clearing (C1–C9) on a request projection. When the history reaches the
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
  const tokens = messages.map((m) => est.message(m));
  const total = sum(tokens);
  const base = unchangedDiagnostics(total, localTrigger, evidenceBudget);
  const pairing = opts.pairing ?? analyzePairing(messages);

  if (!policy.enabled || messages.length === 0 || total < localTrigger) {
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

  const { candidates, savings } = clearingCandidates(messages, pairing, tokens, est, isProtected);
  let out: Message[] | null = null;
  const replaced = clearInSteps(candidates, savings, policy.clearAtLeast);
  for (const i of replaced)
    (out ??= messages.slice())[i] = memoStub(messages[i], toolNameOf(messages, pairing, i));
  const clearedInputs = out ? clearInputsOfReplaced(messages, out, pairing, replaced, policy, est) : 0;

  const result = out ?? messages;
  const protectedBatches = protectedBatch.reduce((n, p) => n + p, 0);
  const protectedResults = messages.filter((m, i) => m.role === 'tool' && isProtected(i)).length;
  const projectedTokens = out ? sum(out.map((m) => est.message(m))) : total;
  const replacedSet = new Set(replaced);
  return {
    messages: result,
    diagnostics: {
      ...base,
      projectedTokens,
      clearedResults: replaced.length,
      protectedBatches,
      protectedResults,
      clearedInputs,
      clearingApplied: true,
      evidenceBatches: evidence.count,
      evidenceTokens: evidence.tokens,
      reason: appliedReason(total, localTrigger, evidence, evidenceBudget, protectedBatches, replaced.length),
      perTool: toolStats(messages, pairing, tokens, (i) => replacedSet.has(i)),
    },
  };
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

/** Unprotected tool results whose stub is smaller, with the tokens each stub saves. */
function clearingCandidates(
  messages: readonly Message[],
  pairing: Pairing,
  tokens: readonly number[],
  est: Estimator,
  isProtected: (i: number) => boolean,
): { candidates: number[]; savings: number[] } {
  const candidates: number[] = [];
  const savings: number[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role !== 'tool' || isProtected(i)) continue;
    const saved = tokens[i] - est.message(memoStub(m, toolNameOf(messages, pairing, i)));
    if (saved <= 0) continue; // C6: small results stay unchanged
    candidates.push(i);
    savings.push(saved);
  }
  return { candidates, savings };
}

/**
 * The plain clearing API (C4): {@link clearOldToolResultsWithRecentBatches} with
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

function isComplete(batch: ToolBatch): boolean {
  return !batch.resultOfCall.includes(-1);
}

interface EvidenceWindow {
  batches: Uint8Array;
  count: number;
  tokens: number;
  /** Tokens of the first complete batch that did not fit (0 when the walk ran out of batches). */
  stoppedAt: number;
  /** True when the newest complete batch alone exceeds the budget (C9). */
  newestOversized: boolean;
}

/**
 * C2: complete batches newest-first while the running total (inputs + results) stays within
 * budget. Incomplete batches (possible only on un-normalized input) are not walk steps.
 */
function evidenceWindow(pairing: Pairing, tokens: readonly number[], budget: number): EvidenceWindow {
  const batches = new Uint8Array(pairing.batches.length);
  let running = 0;
  let count = 0;
  let stoppedAt = 0;
  for (let b = pairing.batches.length - 1; b >= 0; b--) {
    const batch = pairing.batches[b];
    if (!isComplete(batch)) continue;
    let cost = tokens[batch.assistantIndex];
    for (const r of batch.resultIndices) cost += tokens[r];
    if (running + cost > budget) {
      stoppedAt = cost;
      break; // stop before the first batch that does not fit; never skip over it
    }
    running += cost;
    batches[b] = 1;
    count++;
  }
  return { batches, count, tokens: running, stoppedAt, newestOversized: count === 0 && stoppedAt > 0 };
}

/**
 * C3: the newest `keepToolUses` results, each expanded to its whole batch, plus the newest
 * `keepRecentToolBatches` batches — both by originating (assistant) message order. Results
 * that match no batch count by their own position and protect only themselves (C5).
 */
function countProtected(
  messages: readonly Message[],
  pairing: Pairing,
  policy: ClearingPolicy,
): { batches: Uint8Array; orphans: Set<number> } {
  const batches = new Uint8Array(pairing.batches.length);
  const orphans = new Set<number>();
  const orphanIdx: number[] = [];
  for (let i = 0; i < messages.length; i++)
    if (messages[i].role === 'tool' && pairing.batchOf[i] < 0) orphanIdx.push(i);

  let b = pairing.batches.length - 1;
  let o = orphanIdx.length - 1;
  for (let kept = 0; kept < policy.keepToolUses && (b >= 0 || o >= 0);) {
    if (o < 0 || (b >= 0 && pairing.batches[b].assistantIndex > orphanIdx[o])) {
      const n = pairing.batches[b].resultIndices.length;
      if (n > 0) {
        batches[b] = 1;
        kept += n;
      }
      b--;
    } else {
      orphans.add(orphanIdx[o--]);
      kept++;
    }
  }
  for (let k = 0, c = pairing.batches.length - 1; k < policy.keepRecentToolBatches && c >= 0; k++, c--)
    batches[c] = 1;
  return { batches, orphans };
}

function toolNameOf(messages: readonly Message[], pairing: Pairing, i: number): string {
  const m = messages[i];
  if (m.toolName) return m.toolName;
  const b = pairing.batchOf[i];
  if (b < 0) return 'tool';
  const batch = pairing.batches[b];
  const pos = batch.resultCallPositions[batch.resultIndices.indexOf(i)];
  return messages[batch.assistantIndex].toolCalls?.[pos]?.name || 'tool';
}

function memoStub(m: Message, tool: string): Message {
  const hit = stubCache.get(m);
  if (hit && hit.tool === tool) return hit.stub;
  const stub = stubResult(m, tool);
  stubCache.set(m, { tool, stub });
  return stub;
}

function appliedReason(
  total: number,
  trigger: number,
  evidence: EvidenceWindow,
  budget: number,
  protectedBatches: number,
  cleared: number,
): string {
  // The reason a report prints, one part per clearing rule in play (C1, C2, C9, C3).
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
