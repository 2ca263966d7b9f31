import { fromPromise } from 'xstate';
import {
  capacityRetryMachine,
  hierarchicalSummaryMachine,
  type PrepareBandsInput,
  type PrepareBandsOutput,
  type PrepareSummaryInputInput,
  type PrepareSummaryInputOutput,
  type RequestSummaryInput,
  type RequestSummaryOutput,
} from '../../../machines/index.js';
import { redactKnown } from '../../core/redact.js';
import { toActorFailure } from '../actor-failure.js';
import type { CompactionDeps } from '../compaction/compaction-deps.js';
import type { MessageStore } from '../message-store.js';
import type { SummaryForks } from './summary-forks.js';

// The Local strategy's actors: the capacityRetry machine (prepare a fork, request its summary,
// retry smaller on a capacity rejection) and the hierarchicalSummary machine that runs it once
// per band (L4, L5).

const prepareSummaryInput = (sf: SummaryForks) =>
  fromPromise<PrepareSummaryInputOutput, PrepareSummaryInputInput>(async ({ input }) => {
    const key = sf.key(input);
    let fork = sf.forks.get(key);
    if (!fork) {
      try {
        fork = sf.prepare(input);
      } catch (e) {
        throw toActorFailure(e);
      }
      sf.forks.set(key, fork);
    }
    return { inputTokens: fork.inputTokens };
  });

/** One summary call, kept in the store under its turn, band and attempt so a restore reuses it. */
const requestSummary = (deps: CompactionDeps, store: MessageStore, sf: SummaryForks) =>
  fromPromise<RequestSummaryOutput, RequestSummaryInput>(({ input, signal }) =>
    store.once(`${input.turnId}:requestSummary:${input.band}:${input.attempt}`, async () => {
      const fork = sf.forks.get(sf.key(input)) ?? sf.prepare(input);
      let response;
      try {
        response = await sf.summarizer().request(fork, input.band, signal);
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
        followsTemplate: text !== '' && sf.summarizer().followsTemplate(text, input.band),
        empty: text === '',
      };
    }),
  );

export function provideCapacityRetry(deps: CompactionDeps, store: MessageStore, sf: SummaryForks) {
  return capacityRetryMachine.provide({
    actors: {
      prepareSummaryInput: prepareSummaryInput(sf),
      requestSummary: requestSummary(deps, store, sf),
    },
  });
}

/** Both bands are prepared at once (attempt 0); a retry re-bounds one band in capacityRetry. */
const prepareBands = (store: MessageStore, sf: SummaryForks) =>
  fromPromise<PrepareBandsOutput, PrepareBandsInput>(async ({ input }) => {
    let bands;
    try {
      bands = sf.summarizer().prepareBands(store.get(input.historyRef), input.budget);
    } catch (e) {
      throw toActorFailure(e);
    }
    sf.forks.set(`${input.turnId}:older:0`, bands.older);
    sf.forks.set(`${input.turnId}:newer:0`, bands.newer);
    return {
      older: { inputTokens: bands.older.inputTokens },
      newer: { inputTokens: bands.newer.inputTokens },
    };
  });

export function provideHierarchicalSummary(
  store: MessageStore,
  sf: SummaryForks,
  capacityRetry: ReturnType<typeof provideCapacityRetry>,
) {
  return hierarchicalSummaryMachine.provide({
    actors: { prepareBands: prepareBands(store, sf), capacityRetry },
  });
}
