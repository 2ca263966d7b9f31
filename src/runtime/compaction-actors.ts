import { fromPromise } from 'xstate';
import {
  capacityRetryMachine,
  compactionMachine,
  hierarchicalSummaryMachine,
  type CompactInlineOutput,
  type CompactStandaloneOutput,
  type NativeCompactInput,
  type PrepareBandsInput,
  type PrepareBandsOutput,
  type PrepareSummaryInputInput,
  type PrepareSummaryInputOutput,
  type RebuildHistoryInput,
  type RebuildHistoryOutput,
  type RequestSummaryInput,
  type RequestSummaryOutput,
} from '../../machines/index.js';
import type { Estimator } from '../estimate/estimator.js';
import type { RequestFields } from '../providers/request-fields.js';
import type { NativeInlineClient, NativeStandaloneClient, ToolSchema } from '../providers/types.js';
import { redactKnown } from '../core/redact.js';
import { resolveSummaryInputBudget } from '../projection/budgets.js';
import {
  COMPACT_TRIGGER_FLOOR,
  DEFAULT_INLINE_MAX_TOKENS,
  inlineMaxTokens,
} from '../providers/inline-client.js';
import { boundHistoryForNative } from '../summary/bound-native.js';
import { frozenPrefixTokens } from '../summary/request-fit.js';
import { ActorFailureError, toActorFailure } from './actor-failure.js';
import type { LocalSummarizer, PreparedFork } from './local-summarizer.js';
import type { MessageStore } from './message-store.js';
import { textOf, type Message } from '../messages/message.js';

/** Everything a compaction pass needs besides the history. */
export interface CompactionDeps {
  estimator: Estimator;
  /** S1: NativeStandalone client, when the route has one. */
  standalone?: NativeStandaloneClient;
  /** S1: NativeInline client, when the route has one. */
  inline?: NativeInlineClient;
  /** Local strategy (the universal fallback). */
  summarizer?: LocalSummarizer;
  /** Custom instructions for the native standalone endpoint (O3). */
  instructions?: string;
  /** Frozen parent envelope reused by inline requests when provider and model match (S2). */
  system?: string;
  tools?: ToolSchema[];
  /** A1: the provider reports context-edit support. */
  supportsContextEdits?: boolean;
  /** The caller's own request fields (cache/tier fields, Anthropic `thinking`), forwarded (O1, A1). */
  requestFields?: RequestFields;
  /** The configured API key values: a summary is stored with them redacted, and nothing else is. */
  secrets?: readonly string[];
  /** Capacity every native request must fit, its requested output counted (L1); null/absent = unknown. */
  capacity?: number | null;
}

/**
 * Input allowance of a native request: the capacity less L1's safety headroom, the frozen
 * prefix and the output it asks for (null when the capacity is unknown).
 */
function nativeAllowance(capacity: number | null | undefined, frozen: number, output: number): number | null {
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
 * system messages open the next window, unless the provider returned them itself (O3, A3).
 */
export function withLeadingSystem(history: readonly Message[], items: readonly Message[]): Message[] {
  let lead = 0;
  while (lead < history.length && history[lead].role === 'system') lead++;
  const same = (a: Message, b: Message | undefined) =>
    b !== undefined && b.role === 'system' && textOf(b.content) === textOf(a.content);
  if (lead === 0 || history.slice(0, lead).every((m, i) => same(m, items[i]))) return [...items];
  return [...history.slice(0, lead), ...items];
}

function unavailable(what: string): never {
  throw new ActorFailureError('provider', `${what} is not configured for this route`);
}

/**
 * Actor implementations for the compaction, capacityRetry and hierarchicalSummary machines,
 * and the machine with all of them provided. Provider calls are keyed by turn, actor, band and
 * attempt in the store, so a restored pass reuses a call that had already finished.
 */
export function provideCompaction(deps: CompactionDeps, store: MessageStore) {
  const forks = new Map<string, PreparedFork>();
  const summarizer = (): LocalSummarizer => deps.summarizer ?? unavailable('a local summarizer');
  const forkKey = (i: { turnId: string; band: string; attempt: number }) =>
    `${i.turnId}:${i.band}:${i.attempt}`;
  const prepareFork = (i: PrepareSummaryInputInput): PreparedFork => {
    const history = store.get(i.historyRef);
    const s = summarizer();
    return i.band === 'flat' ? s.prepare(history, i.budget) : s.prepareBand(history, i.band, i.budget);
  };

  const capacityRetry = capacityRetryMachine.provide({
    actors: {
      prepareSummaryInput: fromPromise<PrepareSummaryInputOutput, PrepareSummaryInputInput>(
        async ({ input }) => {
          const key = forkKey(input);
          let fork = forks.get(key);
          if (!fork) {
            try {
              fork = prepareFork(input);
            } catch (e) {
              throw toActorFailure(e);
            }
            forks.set(key, fork);
          }
          return { inputTokens: fork.inputTokens };
        },
      ),
      requestSummary: fromPromise<RequestSummaryOutput, RequestSummaryInput>(({ input, signal }) =>
        store.once(`${input.turnId}:requestSummary:${input.band}:${input.attempt}`, async () => {
          const fork = forks.get(forkKey(input)) ?? prepareFork(input);
          let response;
          try {
            response = await summarizer().request(fork, input.band, signal);
          } catch (e) {
            throw toActorFailure(e, fork.inputTokens);
          }
          // A summary that echoes the configured key must not carry it into the store; text that
          // merely looks like a key is conversation content and stays.
          const text = redactKnown(response.text.trim(), deps.secrets ?? []);
          const summaryRef = store.putText(`${input.turnId}:summary:${input.band}:${input.attempt}`, text);
          return {
            summaryRef,
            summaryTokens: text === '' ? 0 : deps.estimator.text(text),
            inputTokens: fork.inputTokens,
            finishReason: response.finishReason,
            followsTemplate: text !== '' && summarizer().followsTemplate(text, input.band),
            empty: text === '',
          };
        }),
      ),
    },
  });

  const hierarchicalSummary = hierarchicalSummaryMachine.provide({
    actors: {
      prepareBands: fromPromise<PrepareBandsOutput, PrepareBandsInput>(async ({ input }) => {
        let bands;
        try {
          bands = summarizer().prepareBands(store.get(input.historyRef), input.budget);
        } catch (e) {
          throw toActorFailure(e);
        }
        forks.set(`${input.turnId}:older:0`, bands.older);
        forks.set(`${input.turnId}:newer:0`, bands.newer);
        return {
          older: { inputTokens: bands.older.inputTokens },
          newer: { inputTokens: bands.newer.inputTokens },
        };
      }),
      capacityRetry,
    },
  });

  // S3/H3: a pass counts when it leaves fewer items or fewer estimated tokens.
  const shrank = (before: readonly Message[], after: readonly Message[]): boolean =>
    after.length < before.length || deps.estimator.history(after) < deps.estimator.history(before);

  return compactionMachine.provide({
    actors: {
      compactStandalone: fromPromise<CompactStandaloneOutput, NativeCompactInput>(({ input, signal }) =>
        store.once(`${input.turnId}:compactStandalone:native:${input.attempt ?? 0}`, async () => {
          const client = deps.standalone ?? unavailable('a native standalone client');
          const history = store.get(input.historyRef);
          // The request is bounded like the seed's marker-preserving native bound; an unknown
          // capacity sends the whole history, and a retry gets the halved budget (L1, L5).
          const frozen = frozenPrefixTokens(deps.instructions, undefined, deps.estimator);
          const allowance = nativeAllowance(deps.capacity, frozen, 0);
          const budget = input.budget ?? null;
          const limit =
            allowance === null ? budget : budget === null ? allowance : Math.min(allowance, budget);
          let sent: number | undefined;
          try {
            const bounded = boundHistoryForNative(history, limit, deps.estimator);
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
            const next = withLeadingSystem(history, result.items);
            const ref = store.put(`${input.turnId}:history:native`, next);
            return { historyRef: ref, itemCount: next.length, shrank: shrank(history, next) };
          } catch (e) {
            throw toActorFailure(e, sent);
          }
        }),
      ),
      compactInline: fromPromise<CompactInlineOutput, NativeCompactInput>(({ input, signal }) =>
        store.once(`${input.turnId}:compactInline:native:0`, async () => {
          const client = deps.inline ?? unavailable('a native inline client');
          const history = store.get(input.historyRef);
          // The request fits the capacity with its prefix and max_tokens (L1); one that stays under
          // the compact edit's trigger cannot compact, so it is not sent (A4: Local instead).
          // The max_tokens actually sent counts, the caller's thinking budget included (L1, A1).
          const maxOutputTokens = inlineOutputTokens(deps.capacity);
          const frozen = frozenPrefixTokens(deps.system, deps.tools, deps.estimator);
          const sentMax =
            maxOutputTokens === undefined
              ? 0
              : inlineMaxTokens(deps.requestFields?.thinking ?? undefined, maxOutputTokens);
          const allowance = nativeAllowance(deps.capacity, frozen, sentMax);
          let result;
          try {
            const bounded = boundHistoryForNative(history, allowance, deps.estimator);
            if (bounded.inputTokens + frozen < COMPACT_TRIGGER_FLOOR)
              return { kind: 'fallback', reason: 'below-trigger' };
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
            shrank: shrank(history, next),
          };
        }),
      ),
      capacityRetry,
      hierarchicalSummary,
      rebuildHistory: fromPromise<RebuildHistoryOutput, RebuildHistoryInput>(async ({ input }) => {
        const summaries = input.summaryRefs.map((ref) => store.getText(ref));
        const before = store.get(input.historyRef);
        const rebuilt = summarizer().rebuild(before, summaries, input.mode);
        const ref = store.put(`${input.turnId}:history:compacted`, rebuilt);
        return { historyRef: ref, itemCount: rebuilt.length, shrank: shrank(before, rebuilt) };
      }),
    },
  });
}
