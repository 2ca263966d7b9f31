import { fromPromise } from 'xstate';
import {
  capacityRetryMachine,
  compactionMachine,
  hierarchicalSummaryMachine,
  type AdoptNativeWindowInput,
  type CompactedHistory,
  type CompactInlineOutput,
  type MeasureInlineOutput,
  type NativeCompactInput,
  type PrepareSummaryInputInput,
  type PrepareSummaryInputOutput,
  type RebuildHistoryInput,
  type RebuildHistoryOutput,
  type RequestSummaryInput,
  type RequestSummaryOutput,
} from '../../../machines/index.js';
import { textOf, type Message } from '../../messages/message.js';
import { resolveSummaryInputBudget } from '../../projection/budgets.js';
import {
  COMPACT_TRIGGER_FLOOR,
  DEFAULT_INLINE_MAX_TOKENS,
  inlineMaxTokens,
} from '../../providers/anthropic/inline-client.js';
import { boundHistoryForNative } from '../../summary/bound-native.js';
import { frozenPrefixTokens } from '../../summary/request-fit.js';
import { toActorFailure } from '../actor-failure.js';
import type { MessageStore } from '../message-store.js';
import {
  createCapacityRetryImplementations,
  createHierarchicalSummaryImplementations,
  createSummaryForks,
  type SummaryForks,
} from '../local-summary/local-summary.implementations.js';
import { tokensOf, unavailable, type CompactionDeps } from './compaction-deps.js';
import { amendSummaryActor, checkReceiptActor } from './receipt.implementations.js';

// The sizes of native compaction requests.

/**
 * Input allowance of a native request: the capacity less the summary call's safety headroom (an
 * eighth of the window plus 512), the frozen prefix and the output it asks for (null when the
 * capacity is unknown).
 */
export function nativeAllowance(
  capacity: number | null | undefined,
  frozen: number,
  output: number,
): number | null {
  if (capacity === undefined || capacity === null) return null;
  return Math.max(0, resolveSummaryInputBudget(capacity, frozen, output, 0) ?? 0);
}

/** `max_tokens` of an inline request: the client's default, never above an eighth of the capacity. */
export function inlineOutputTokens(capacity: number | null | undefined): number | undefined {
  if (capacity === undefined || capacity === null) return undefined;
  return Math.max(1, Math.min(DEFAULT_INLINE_MAX_TOKENS, Math.floor(capacity / 8)));
}

/**
 * A native result replaces the conversation, not its system prompt: the history's leading
 * system messages open the next window, unless the provider returned them itself.
 */
export function withLeadingSystem(history: readonly Message[], items: readonly Message[]): Message[] {
  let lead = 0;
  while (lead < history.length && history[lead].role === 'system') lead++;
  const same = (a: Message, b: Message | undefined) =>
    b !== undefined && b.role === 'system' && textOf(b.content) === textOf(a.content);
  if (lead === 0 || history.slice(0, lead).every((m, i) => same(m, items[i]))) return [...items];
  return [...history.slice(0, lead), ...items];
}

// The provider's own compaction (the native strategies). The standalone endpoint runs inside the
// capacity-retry ladder: preparing bounds the history to the attempt's budget, requesting calls
// the endpoint. Each call is kept in the store under its turn and attempt, so a restored pass
// reuses a call that had already finished.

/** The standalone request's history bounded to the attempt's budget (and the window). */
function boundStandalone(
  deps: CompactionDeps,
  store: MessageStore,
  historyRef: string,
  budget: number | null,
) {
  const frozen = frozenPrefixTokens(deps.instructions, undefined, deps.estimator);
  const allowance = nativeAllowance(deps.capacity, frozen, 0);
  const limit = allowance === null ? budget : budget === null ? allowance : Math.min(allowance, budget);
  return boundHistoryForNative(store.get(historyRef), limit, deps.estimator);
}

/** NativeStandalone, preparing: the size of the bounded request (a budget it cannot fit fails here). */
const prepareStandalone = (deps: CompactionDeps, store: MessageStore) =>
  fromPromise<PrepareSummaryInputOutput, PrepareSummaryInputInput>(async ({ input }) => {
    try {
      return { inputTokens: boundStandalone(deps, store, input.historyRef, input.budget).inputTokens };
    } catch (e) {
      throw toActorFailure(e);
    }
  });

/** NativeStandalone, requesting: the endpoint's window is stored as returned, under the attempt. */
const requestStandalone = (deps: CompactionDeps, store: MessageStore) =>
  fromPromise<RequestSummaryOutput, RequestSummaryInput>(({ input, signal }) =>
    store.once(`${input.turnId}:compactStandalone:native:${input.attempt}`, async () => {
      const client = deps.standalone ?? unavailable('a native standalone client');
      let sent: number | undefined;
      try {
        const bounded = boundStandalone(deps, store, input.historyRef, input.budget);
        sent = bounded.inputTokens;
        const result = await client.compactStandalone(
          {
            model: client.model,
            input: bounded.messages,
            instructions: deps.instructions,
            requestFields: deps.requestFields,
          },
          signal,
        );
        const ref = store.put(`${input.turnId}:window:native:${input.attempt}`, result.items);
        return {
          summaryRef: ref,
          summaryTokens: deps.estimator.history(result.items),
          inputTokens: bounded.inputTokens,
          finishReason: 'stop',
          followsTemplate: true,
          empty: result.items.length === 0,
        };
      } catch (e) {
        throw toActorFailure(e, sent);
      }
    }),
  );

/** The endpoint's window replaces the conversation, not its system prompt. */
const adoptNativeWindow = (deps: CompactionDeps, store: MessageStore) =>
  fromPromise<CompactedHistory, AdoptNativeWindowInput>(async ({ input }) => {
    const history = store.get(input.historyRef);
    const next = withLeadingSystem(history, store.get(input.windowRef));
    const ref = store.put(`${input.turnId}:history:native`, next);
    return { historyRef: ref, itemCount: next.length, tokens: tokensOf(deps.estimator, history, next) };
  });

/** The inline request's sizes: its `max_tokens`, the frozen prefix and the bounded history. */
function inlineShape(deps: CompactionDeps, history: readonly Message[]) {
  // The request fits the capacity with its prefix and max_tokens; the max_tokens actually
  // sent counts, the caller's thinking budget included.
  const maxOutputTokens = inlineOutputTokens(deps.capacity);
  const frozen = frozenPrefixTokens(deps.system, deps.tools, deps.estimator);
  const sentMax =
    maxOutputTokens === undefined
      ? 0
      : inlineMaxTokens(deps.requestFields?.thinking ?? undefined, maxOutputTokens);
  const bounded = boundHistoryForNative(
    history,
    nativeAllowance(deps.capacity, frozen, sentMax),
    deps.estimator,
  );
  return { maxOutputTokens, frozen, bounded };
}

/** NativeInline, measuring: the request's input against the compact edit's trigger. */
const measureInline = (deps: CompactionDeps, store: MessageStore) =>
  fromPromise<MeasureInlineOutput, NativeCompactInput>(async ({ input }) => {
    try {
      const { frozen, bounded } = inlineShape(deps, store.get(input.historyRef));
      return { inputTokens: bounded.inputTokens + frozen, triggerTokens: COMPACT_TRIGGER_FLOOR };
    } catch (e) {
      throw toActorFailure(e);
    }
  });

/** NativeInline: a request with the compact context edit; the provider may decline (fallback). */
export const compactInline = (deps: CompactionDeps, store: MessageStore) =>
  fromPromise<CompactInlineOutput, NativeCompactInput>(({ input, signal }) =>
    store.once(`${input.turnId}:compactInline:native:0`, async () => {
      const client = deps.inline ?? unavailable('a native inline client');
      const history = store.get(input.historyRef);
      let result;
      try {
        const { maxOutputTokens, bounded } = inlineShape(deps, history);
        result = await client.compactInline(
          {
            model: client.model,
            system: deps.system,
            tools: deps.tools,
            messages: bounded.messages,
            supportsContextEdits: deps.supportsContextEdits ?? true,
            instructions: deps.instructions,
            requestFields: deps.requestFields,
            ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
          },
          signal,
        );
      } catch (e) {
        throw toActorFailure(e);
      }
      if (result.kind === 'fallback') return { kind: 'fallback', reason: result.reason };
      const next = withLeadingSystem(history, result.messages);
      const ref = store.put(`${input.turnId}:history:inline`, next);
      return {
        kind: 'compacted',
        historyRef: ref,
        itemCount: next.length,
        tokens: tokensOf(deps.estimator, history, next),
      };
    }),
  );

/** The summaries, the kept messages and the continuity tail become the next history. */
const rebuildHistory = (deps: CompactionDeps, store: MessageStore, sf: SummaryForks) =>
  fromPromise<RebuildHistoryOutput, RebuildHistoryInput>(async ({ input }) => {
    const summaries = input.summaryRefs.map((ref) => store.getText(ref));
    const before = store.get(input.historyRef);
    const rebuilt = sf.summarizer().rebuild(before, summaries, input.mode);
    const ref = store.put(`${input.turnId}:history:compacted`, rebuilt);
    return { historyRef: ref, itemCount: rebuilt.length, tokens: tokensOf(deps.estimator, before, rebuilt) };
  });

/** What the compaction machine's actors work with during one run. */
export interface CompactionImplementationsDeps extends CompactionDeps {
  /** The run's message store (histories and summaries by ref). */
  store: MessageStore;
}

/**
 * Actor implementations for the compaction machine, for `compactionMachine.provide`: the native
 * endpoints, the Local summary (the capacityRetry and hierarchicalSummary machines provided
 * with their own implementations) and the rebuild. Provider calls are keyed by turn, actor,
 * band and attempt in the store, so a restored pass reuses a call that had already finished.
 */
export function createCompactionImplementations(deps: CompactionImplementationsDeps) {
  const { store } = deps;
  const forks = createSummaryForks(deps);
  const capacityRetry = capacityRetryMachine.provide(createCapacityRetryImplementations({ ...deps, forks }));
  const hierarchicalSummary = hierarchicalSummaryMachine.provide(
    createHierarchicalSummaryImplementations({ ...deps, forks, capacityRetry }),
  );
  const compactStandalone = capacityRetryMachine.provide({
    actors: {
      prepareSummaryInput: prepareStandalone(deps, store),
      requestSummary: requestStandalone(deps, store),
    },
  });
  return {
    actors: {
      compactStandalone,
      adoptNativeWindow: adoptNativeWindow(deps, store),
      measureInline: measureInline(deps, store),
      compactInline: compactInline(deps, store),
      capacityRetry,
      hierarchicalSummary,
      rebuildHistory: rebuildHistory(deps, store, forks),
      checkReceipt: checkReceiptActor(deps, store),
      amendSummary: amendSummaryActor(deps, store),
    },
  };
}

/** The compaction machine provided for one run. */
export const provideCompaction = (deps: CompactionImplementationsDeps) =>
  compactionMachine.provide(createCompactionImplementations(deps));
