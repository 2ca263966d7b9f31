import { fromPromise } from 'xstate';
import {
  type capacityRetryMachine,
  type PrepareBandsInput,
  type PrepareBandsOutput,
  type PrepareSummaryInputInput,
  type PrepareSummaryInputOutput,
  type RequestSummaryInput,
  type RequestSummaryOutput,
  type SummaryBand,
} from '../../../machines/index.js';
import { redactKnown } from '../../core/redact.js';
import { toActorFailure } from '../actor-failure.js';
import { unavailable, type CompactionDeps } from '../compaction/compaction-deps.js';
import type { MessageStore } from '../message-store.js';
import type { LocalSummarizer, PreparedFork } from './local-summarizer.js';

/**
 * The Local strategy's prepared forks for one provided compaction machine, keyed by turn, band
 * and attempt. Preparing is pure and deterministic, so forks are never persisted: after a
 * restore the map is empty and a fork is prepared again when its summary is requested.
 */
export interface SummaryForks {
  readonly forks: Map<string, PreparedFork>;
  /** The Local summarizer; a route without one fails as a provider failure. */
  summarizer(): LocalSummarizer;
  key(i: { turnId: string; band: string; attempt: number }): string;
  prepare(i: PrepareSummaryInputInput): PreparedFork;
}

/** The Local ladders summarize bands; the native band belongs to the standalone endpoint. */
function summaryBandOf(band: SummaryBand | 'native'): SummaryBand {
  return band === 'native' ? unavailable('a native band in the Local summary') : band;
}

export function createSummaryForks(deps: CompactionDeps & { store: MessageStore }): SummaryForks {
  const { store } = deps;
  const summarizer = (): LocalSummarizer => deps.summarizer ?? unavailable('a local summarizer');
  return {
    forks: new Map<string, PreparedFork>(),
    summarizer,
    key: (i) => `${i.turnId}:${i.band}:${i.attempt}`,
    prepare(i) {
      const history = store.get(i.historyRef);
      const s = summarizer();
      const band = summaryBandOf(i.band);
      return band === 'flat' ? s.prepare(history, i.budget) : s.prepareBand(history, band, i.budget);
    },
  };
}

// The Local strategy's actors: the capacityRetry machine (prepare a fork, request its summary,
// retry smaller on a capacity rejection) and the hierarchicalSummary machine that runs it once
// per band.

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

/**
 * One summary call (or the repair request of one), kept in the store under its turn, band and
 * attempt so a restore reuses it.
 */
const requestSummary = (deps: CompactionDeps, store: MessageStore, sf: SummaryForks) =>
  fromPromise<RequestSummaryOutput, RequestSummaryInput>(({ input, signal }) => {
    const repair = input.repairOf === undefined ? '' : ':repair';
    return store.once(`${input.turnId}:requestSummary:${input.band}:${input.attempt}${repair}`, async () => {
      const fork = sf.forks.get(sf.key(input)) ?? sf.prepare(input);
      const band = summaryBandOf(input.band);
      const s = sf.summarizer();
      let response;
      try {
        response =
          input.repairOf === undefined
            ? await s.request(fork, band, signal)
            : s.repair
              ? await s.repair(fork, band, store.getText(input.repairOf), signal)
              : await s.request(fork, band, signal);
      } catch (e) {
        throw toActorFailure(e, fork.inputTokens);
      }
      // A summary that echoes the configured key must not carry it into the store; text that
      // merely looks like a key is conversation content and stays.
      const text = redactKnown(response.text.trim(), deps.secrets ?? []);
      const summaryRef = store.putText(
        `${input.turnId}:summary:${input.band}:${input.attempt}${repair}`,
        text,
      );
      return {
        summaryRef,
        summaryTokens: text === '' ? 0 : deps.estimator.text(text),
        inputTokens: fork.inputTokens,
        finishReason: response.finishReason,
        followsTemplate: text !== '' && s.followsTemplate(text, band),
        empty: text === '',
      };
    });
  });

/** What the Local summary's actors work with during one run: the compaction deps, the store and the forks. */
export interface LocalSummaryImplementationsDeps extends CompactionDeps {
  store: MessageStore;
  forks: SummaryForks;
}

/** Actor implementations for the capacityRetry machine, for `capacityRetryMachine.provide`. */
export function createCapacityRetryImplementations(deps: LocalSummaryImplementationsDeps) {
  return {
    actors: {
      prepareSummaryInput: prepareSummaryInput(deps.forks),
      requestSummary: requestSummary(deps, deps.store, deps.forks),
    },
  };
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

/**
 * Actor implementations for the hierarchicalSummary machine, for
 * `hierarchicalSummaryMachine.provide`; `capacityRetry` is that machine already provided.
 */
export function createHierarchicalSummaryImplementations(
  deps: LocalSummaryImplementationsDeps & { capacityRetry: typeof capacityRetryMachine },
) {
  return {
    actors: { prepareBands: prepareBands(deps.store, deps.forks), capacityRetry: deps.capacityRetry },
  };
}
