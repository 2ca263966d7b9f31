import { fromPromise } from 'xstate';
import type {
  CompactInlineOutput,
  CompactStandaloneOutput,
  NativeCompactInput,
} from '../../machines/index.js';
import { COMPACT_TRIGGER_FLOOR, inlineMaxTokens } from '../providers/anthropic/inline-client.js';
import { boundHistoryForNative } from '../summary/bound-native.js';
import { frozenPrefixTokens } from '../summary/request-fit.js';
import { toActorFailure } from './actor-failure.js';
import { shrank, unavailable, type CompactionDeps } from './compaction-deps.js';
import type { MessageStore } from './message-store.js';
import { inlineOutputTokens, nativeAllowance, withLeadingSystem } from './native-bounds.js';

// The provider's own compaction (S1), one actor per endpoint. Each call is kept in the store
// under its turn and attempt, so a restored pass reuses a call that had already finished.

/** NativeStandalone: the provider's compact endpoint returns the next window's items. */
export const compactStandalone = (deps: CompactionDeps, store: MessageStore) =>
  fromPromise<CompactStandaloneOutput, NativeCompactInput>(({ input, signal }) =>
    store.once(`${input.turnId}:compactStandalone:native:${input.attempt ?? 0}`, async () => {
      const client = deps.standalone ?? unavailable('a native standalone client');
      const history = store.get(input.historyRef);
      // The request is bounded like the seed's marker-preserving native bound; an unknown
      // capacity sends the whole history, and a retry gets the halved budget (L1, L5).
      const frozen = frozenPrefixTokens(deps.instructions, undefined, deps.estimator);
      const allowance = nativeAllowance(deps.capacity, frozen, 0);
      const budget = input.budget ?? null;
      const limit = allowance === null ? budget : budget === null ? allowance : Math.min(allowance, budget);
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
        return { historyRef: ref, itemCount: next.length, shrank: shrank(deps.estimator, history, next) };
      } catch (e) {
        throw toActorFailure(e, sent);
      }
    }),
  );

/** NativeInline: a request with the compact context edit; the provider may decline (fallback). */
export const compactInline = (deps: CompactionDeps, store: MessageStore) =>
  fromPromise<CompactInlineOutput, NativeCompactInput>(({ input, signal }) =>
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
        shrank: shrank(deps.estimator, history, next),
      };
    }),
  );
