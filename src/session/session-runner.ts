import type { CompactionMode, LoopGuardState } from '../../machines/index.js';
import type { Estimator } from '../estimate/estimator.js';
import { createLocalSummarizer } from '../runtime/local-summary/create-local-summarizer.js';
import type { LocalSummarizerWithWarnings } from '../runtime/local-summary/local-summarizer-options.js';
import { createTurnRunner } from '../runtime/turn-runner.js';
import type { SentMessages, TurnRequest, TurnRunner } from '../runtime/turn-runner-types.js';
import type { ResolvedSessionConfig } from './config.js';
import type { CompactorSessionOptions } from './options.js';
import {
  parentContextFor,
  requestFieldsFor,
  requestToolsFor,
  type RequestEnvelope,
} from './parent-context.js';
import type { SessionRoute } from './route.js';

/** What one turn hands the next so compaction may wait while the prompt cache holds. */
export type CacheCarry = Pick<TurnRequest, 'lastSent' | 'cacheCycle'>;

/** Everything one turn hands the next: the cache carry and the loop guard's memory. */
export type TurnCarry = CacheCarry & { loopGuard: LoopGuardState };

/** What every run of one session shares. */
export interface RunnerContext {
  route: SessionRoute;
  estimator: Estimator;
  /** Resolved once; again when the envelope changes. */
  config: ResolvedSessionConfig;
  hierarchical: boolean | undefined;
  options: Pick<CompactorSessionOptions, 'clock' | 'inspect'>;
}

/** A runner for one turn or compaction, and the summarizer it uses. */
export interface SessionRunner {
  runner: TurnRunner;
  /** The summary/inline request reuses the agent's system prompt and tools. */
  parent: boolean;
  summarizer: LocalSummarizerWithWarnings;
}

/**
 * Wires the machines for one run: the Local summarizer over the route's summary client and
 * the turn runner with the route's native clients. The envelope's system prompt and tools
 * travel only when the one parent-context rule allows it (its tools also where the route's wire
 * needs them for a tool loop), and with them the last request sent, which a summary then
 * extends; its request fields when it went to the route's provider.
 */
export function buildSessionRunner(
  ctx: RunnerContext,
  envelope: RequestEnvelope | undefined,
  mode: CompactionMode,
  instructions?: string,
  lastRequest?: SentMessages,
): SessionRunner {
  const { route, estimator } = ctx;
  const { limits, compaction: settings, budgets } = ctx.config;
  const parent = parentContextFor(envelope, route, mode);
  const requestFields = requestFieldsFor(envelope, route);
  const tools = requestToolsFor(envelope, route, parent);
  const summarizer = builtWhenAsked(() =>
    createLocalSummarizer({
      client: route.summary,
      estimator,
      budgets,
      model: route.model,
      system: parent?.system,
      tools,
      summaryOutputLimit: limits.summaryOutputLimit,
      requestFields,
      instructions,
      promptVersion: settings.promptVersion,
      reinjectBudgetTokens: settings.reinjectBudgetTokens,
      reservedOutput: limits.reservedOutput,
      prefixTokens: limits.prefixTokens,
      // The last request's cached prefix is reused only where its system prompt and tools are.
      ...(parent !== null && lastRequest !== undefined && settings.summaryOverLastRequest !== false
        ? { lastRequest: lastRequest.messages, lastRequestTokens: lastRequest.providerTokens }
        : {}),
    }),
  );
  const runner = createTurnRunner({
    estimator,
    config: ctx.config,
    strategy: route.strategy.kind,
    hierarchical: ctx.hierarchical,
    clock: ctx.options.clock,
    inspect: ctx.options.inspect,
    compaction: {
      summarizer,
      standalone: route.standalone,
      inline: route.inline,
      instructions,
      system: parent?.system,
      tools,
      supportsContextEdits: route.supportsContextEdits,
      requestFields,
      secrets: route.secrets(),
    },
  });
  return { runner, parent: parent !== null, summarizer };
}

/**
 * The Local summarizer, built the first time a pass asks it something: most turns never
 * compact, and resolving its settings (its prompt, the prefix's tokens) was a third of what
 * wiring a turn cost. Before that it has no warnings and no summary request to report.
 */
function builtWhenAsked(make: () => LocalSummarizerWithWarnings): LocalSummarizerWithWarnings {
  let made: LocalSummarizerWithWarnings | undefined;
  const built = () => (made ??= make());
  return {
    // The Local summarizer has both: `?.` only satisfies the interface, which makes them optional.
    compactable: (history) => built().compactable?.(history) ?? 0,
    prepare: (history, budget) => built().prepare(history, budget),
    prepareBands: (history, budget) => built().prepareBands(history, budget),
    prepareBand: (history, band, budget) => built().prepareBand(history, band, budget),
    request: (fork, band, signal) => built().request(fork, band, signal),
    repair: (fork, band, previous, signal) =>
      built().repair?.(fork, band, previous, signal) ?? built().request(fork, band, signal),
    followsTemplate: (text, band) => built().followsTemplate(text, band),
    rebuild: (history, summaries, mode) => built().rebuild(history, summaries, mode),
    warnings: () => made?.warnings() ?? [],
    summaryCache: () => made?.summaryCache() ?? null,
  };
}
