import type { Estimator } from '../../src/estimate/estimator.js';
import type { Message } from '../../src/messages/message.js';
import { resolveBudgets, type Limits } from '../../src/projection/budgets.js';
import { normalizeHistory } from '../../src/projection/normalize.js';
import type { SummaryClient, SummaryRequest } from '../../src/providers/types.js';
import { createCompactorSession, type CompactorSession } from '../../src/session/index.js';
import type { SessionLimits } from '../../src/session/options.js';
import { createOfflineSummarizer } from '../../src/summary/offline/offline-summarizer.js';
import type { Receipt } from '../../src/summary/receipt.js';
import { sessionSettingsOf } from './policies/compactor.js';
import type { CompactorSetting, RetentionPolicy } from './types.js';

/** Summary calls of one step and their estimated input and output tokens. */
export interface SummaryCount {
  calls: number;
  inputTokens: number;
  /** Of the input, what the provider's cache serves: a summary asked over the last request sent. */
  cachedInputTokens: number;
  outputTokens: number;
}

/** What one replayed step sent. */
export interface ReplayStep {
  request: readonly Message[];
  /** Tokens of the live history before anything was cleared or compacted at this step. */
  historyTokens: number;
  /** Clearing or the policy's own rule changed the request. */
  acted: boolean;
  /** Compaction ran and the request still reached the compaction threshold. */
  overThreshold: boolean;
  summary: SummaryCount;
  /** Compactions of this step that carried a receipt, and how many of them had items added verbatim. */
  receipts: ReceiptCount;
}

/** Compactions with a receipt, and those whose summary had to be amended. */
export interface ReceiptCount {
  compactions: number;
  amended: number;
}

/** The count of one compaction's receipt (none: nothing). */
function receiptCount(receipt: Receipt | null | undefined): ReceiptCount {
  if (receipt === null || receipt === undefined) return { compactions: 0, amended: 0 };
  return { compactions: 1, amended: receipt.amended > 0 ? 1 : 0 };
}

/** Feeds a recorded session to one policy, step by step. */
export interface ReplayDriver {
  /** The messages recorded since the last step in, the request of this step out. */
  turn(newMessages: readonly Message[]): Promise<ReplayStep>;
  /** Answers a recall call from everything the session held, as the product's recall tool does. */
  recall(args: unknown, request: readonly Message[]): string;
  close(): void;
}

/** Options shared by the drivers. */
export interface DriverOptions {
  limits: Limits;
  estimator: Estimator;
  /** Summary client (default: the offline summarizer). */
  summarizer?: SummaryClient;
}

/**
 * Wraps a summary client so every call is counted with the replay's estimator (the summary
 * calls cost money in the bench's price model, so their sizes are needed, not only their count).
 */
function countingSummarizer(inner: SummaryClient, est: Estimator) {
  const none = (): SummaryCount => ({ calls: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 });
  let count = none();
  const client: SummaryClient = {
    provider: inner.provider,
    model: inner.model,
    async summarize(request: SummaryRequest, signal?: AbortSignal) {
      count.calls++;
      const messages = est.history(request.messages);
      count.inputTokens += messages + est.text(request.instructions);
      // The last request sent, unchanged: the cache holds it (the instructions are new).
      if (request.prefix === true) count.cachedInputTokens += messages;
      const response = await inner.summarize(request, signal);
      count.outputTokens += est.text(response.text);
      return response;
    },
  };
  return {
    client,
    /** The calls since the last take. */
    take(): SummaryCount {
      const taken = count;
      count = none();
      return taken;
    },
  };
}

function sessionLimitsOf(limits: Limits): SessionLimits {
  const out: SessionLimits = {};
  if (limits.capacity !== undefined) out.capacity = limits.capacity;
  if (limits.reservedOutput !== undefined) out.reservedOutput = limits.reservedOutput;
  if (limits.prefixTokens !== undefined) out.prefixTokens = limits.prefixTokens;
  if (limits.trigger !== undefined) out.trigger = limits.trigger;
  return out;
}

function openSession(
  options: DriverOptions,
  setting: CompactorSetting | undefined,
): { session: CompactorSession; take: () => SummaryCount } {
  const est = options.estimator;
  const counting = countingSummarizer(options.summarizer ?? createOfflineSummarizer({ estimator: est }), est);
  const session = createCompactorSession({
    limits: sessionLimitsOf(options.limits),
    ...sessionSettingsOf(setting ?? {}),
    compaction: {
      ...sessionSettingsOf(setting ?? {}).compaction,
      ...(options.limits.threshold !== undefined ? { threshold: options.limits.threshold } : {}),
    },
    estimator: est,
    summarizer: counting.client,
  });
  // The agent's requests go to the summarizer's model: a summary extends the last request sent.
  session.setEnvelope({ provider: 'replay', model: counting.client.model });
  return { session, take: counting.take };
}

/**
 * A Compactor setting replayed through the product: one `createCompactorSession` turn per
 * step with the new messages as `pending`, and the turn's request as what was sent, so the
 * replay measures what an agent using the library would send (clearing, compaction and its
 * re-injection, summary validation, the loop guard and the cache-aware wait included).
 */
export function productDriver(policy: CompactorSetting, options: DriverOptions): ReplayDriver {
  const est = options.estimator;
  const { session, take } = openSession(options, policy);
  const prefix = Math.max(0, options.limits.prefixTokens ?? 0);
  return {
    async turn(newMessages) {
      const historyTokens = est.history(session.history) + est.history(newMessages);
      const r = await session.runTurn({ pending: newMessages });
      const request = r.request ?? session.history;
      const compacted = r.compaction !== null;
      return {
        request,
        historyTokens,
        acted: (r.clearing?.clearedResults ?? 0) > 0 || (r.clearing?.clearedInputs ?? 0) > 0,
        overThreshold:
          compacted && r.thresholdTokens !== null && est.history(request) + prefix >= r.thresholdTokens,
        summary: take(),
        receipts: receiptCount(r.compaction?.receipt),
      };
    },
    recall: (args, request) => session.recall(args, request),
    close: () => session.close(),
  };
}

/**
 * A baseline or a peer's rule (not a Compactor setting): the policy builds every request from
 * the normalized history itself; when the request reaches the compaction threshold the
 * history is compacted by the product's compaction pass (`session.compact`, automatic mode)
 * and the request is built again from the compacted history. The threshold is the
 * plain one: the cache-aware wait is a Compactor setting.
 */
export function baselineDriver(policy: RetentionPolicy, options: DriverOptions): ReplayDriver {
  const est = options.estimator;
  const { session, take } = openSession(options, undefined);
  const budgets = resolveBudgets(options.limits);
  const ctx = { estimator: est, limits: options.limits, budgets };
  const prefix = Math.max(0, options.limits.prefixTokens ?? 0);
  const threshold = budgets.compactionThreshold;
  return {
    async turn(newMessages) {
      if (newMessages.length > 0) session.append(...newMessages);
      const historyTokens = est.history(session.history);
      const normalized = normalizeHistory(session.history);
      let request = await policy.project(normalized, ctx);
      const acted = request.length !== normalized.length || est.history(request) !== est.history(normalized);
      let overThreshold = false;
      let receipts = receiptCount(null);
      if (threshold !== null && est.history(request) + prefix >= threshold) {
        const report = await session.compact({ mode: 'automatic' });
        receipts = receiptCount(report.receipt);
        if (report.status === 'compacted')
          request = await policy.project(normalizeHistory(session.history), ctx);
        overThreshold = est.history(request) + prefix >= threshold;
      }
      // What was sent, so the next summary extends it as the product's turns do.
      session.recordUsage({ inputTokens: est.history(request) + prefix }, request);
      return { request, historyTokens, acted, overThreshold, summary: take(), receipts };
    },
    recall: (args, request) => session.recall(args, request),
    close: () => session.close(),
  };
}
