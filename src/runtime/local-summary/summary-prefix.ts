import { z } from 'zod';
import { ContextCapacityError } from '../../core/errors.js';
import type { Message } from '../../messages/message.js';
import type { SummaryResponse } from '../../providers/types.js';
import { wholeRequestBandInstructions, type HierarchicalBands } from '../../summary/hierarchical.js';
import type { PreparedSummary } from '../../summary/prepare.js';
import { instructionsTokens as measureInstructions } from '../../summary/preview.js';
import { defaultSummaryOutputTokens } from '../../summary/request-fit.js';
import type { LocalFork } from './local-summarizer-options.js';
import type { LocalSummarySettings } from './local-summary-settings.js';

// A summary by the agent's own model is asked for over the request it was last sent, unchanged,
// with the summary instructions as one more user message: the provider's prompt cache already
// holds that request, so the call pays cached prices for nearly all of its input.

/** How a summary request was built: the last request's exact prefix, or a bounded fork of the history. */
export type SummaryRequestKind = 'prefix' | 'fork';

/** The smallest summary the prefix must leave room for when no output limit is set. */
const MIN_PREFIX_OUTPUT = 1_024;

/** A prefix fork, or why the bounded fork is used instead. */
export type PrefixChoice =
  | { kind: 'prefix'; prepared: PreparedSummary; maxOutputTokens: number | undefined }
  | { kind: 'fork'; reason: string | null };

/** What one summary call over the last request asks: its instructions and the most output it wants. */
interface PrefixAsk {
  instructions: string;
  /** The output the call asks for at most (default: the configured or by-window summary output). */
  maxOutput?: number;
}

/**
 * The summary request over the last request sent, when it fits the window with the instructions
 * and the summary's output (a small margin left for the estimate of the new part). The provider
 * accepted that request already, so no other headroom is needed. `reason` says why not, or is
 * null when there is no such request to reuse (another model, nothing sent yet).
 */
export function choosePrefix(
  s: LocalSummarySettings,
  refused: boolean,
  ask: PrefixAsk = { instructions: s.instructions },
): PrefixChoice {
  const sent = s.opts.lastRequest;
  if (sent === undefined || sent.length === 0) return { kind: 'fork', reason: null };
  if (refused) return { kind: 'fork', reason: 'the provider refused the prefix request as too long' };
  const inputTokens = s.est.history(sent);
  const instructionsTokens = measureInstructions(ask.instructions, s.est);
  const prepared = prefixPrepared(sent, inputTokens, instructionsTokens, ask.instructions);
  const limit = ask.maxOutput ?? s.opts.summaryOutputLimit;
  if (s.capacity === null) return { kind: 'prefix', prepared, maxOutputTokens: limit };
  const margin = Math.floor(s.capacity / 64);
  const whole = Math.max(inputTokens + s.frozen, s.opts.lastRequestTokens ?? 0);
  const room = s.capacity - margin - whole - instructionsTokens;
  const wanted = limit ?? defaultSummaryOutputTokens(s.capacity) ?? MIN_PREFIX_OUTPUT;
  const needed = limit ?? Math.min(wanted, MIN_PREFIX_OUTPUT);
  if (room < needed)
    return {
      kind: 'fork',
      reason: `the last request (${inputTokens} tokens) leaves ${Math.max(0, room)} tokens for the summary, ${needed} needed`,
    };
  return { kind: 'prefix', prepared, maxOutputTokens: Math.min(wanted, room) };
}

function prefixPrepared(
  sent: readonly Message[],
  inputTokens: number,
  instructionsTokens: number,
  instructions: string,
): PreparedSummary {
  return {
    fork: [...sent],
    inputTokens,
    instructionsTokens,
    budget: null,
    instructions,
    mode: 'verbatim',
    omittedMessages: 0,
  };
}

/** A {@link SummaryCacheReport} as another process hands it over (a Restate worker's answer, its object's state). */
export const SummaryCacheReportSchema = z.strictObject({
  request: z.enum(['prefix', 'fork']),
  fallback: z.string().nullable(),
  calls: z.number().int().nonnegative(),
  inputTokens: z.number().int().nonnegative(),
  cachedTokens: z.number().int().nonnegative(),
  share: z.number().min(0).max(1).nullable(),
});

/** The cached share of a pass's summary calls, from the usage the provider reported for each. */
export interface SummaryCacheReport {
  /** How the first summary request was built: over the last request sent, or a bounded fork. */
  request: 'prefix' | 'fork';
  /** Why the last request sent could not be reused, when the bounded fork was sent instead of it. */
  fallback: string | null;
  /** Summary calls of the pass whose provider reported usage. */
  calls: number;
  /** Input tokens of those calls, as the provider counted them (cached ones included). */
  inputTokens: number;
  /** Of those, the tokens the provider's prompt cache served. */
  cachedTokens: number;
  /** `cachedTokens / inputTokens`, null when no call reported usage. */
  share: number | null;
}

/** Counts the summary calls of one pass and the cache they hit. */
export class SummaryCacheTally {
  private kind: SummaryRequestKind | null = null;
  private fallback: string | null = null;
  private calls = 0;
  private input = 0;
  private cached = 0;

  /** A new pass starts counting afresh. */
  clear(): void {
    this.kind = null;
    this.fallback = null;
    this.calls = this.input = this.cached = 0;
  }

  /** How the pass's first summary request was built. */
  chose(kind: SummaryRequestKind, fallback: string | null): void {
    if (this.kind !== null) return;
    this.kind = kind;
    this.fallback = fallback;
  }

  record(response: SummaryResponse): void {
    const u = response.usage;
    if (u?.inputTokens === undefined) return;
    this.calls++;
    this.input += u.inputTokens;
    this.cached += Math.min(u.inputTokens, u.cachedInputTokens ?? 0);
  }

  report(): SummaryCacheReport | null {
    if (this.kind === null) return null;
    return {
      request: this.kind,
      fallback: this.fallback,
      calls: this.calls,
      inputTokens: this.input,
      cachedTokens: this.cached,
      share: this.input > 0 ? this.cached / this.input : null,
    };
  }
}

/**
 * The flat summary's requests of one summarizer: over the last request sent while it fits and
 * the provider has not refused it, and the cache each call hit.
 */
export class PrefixRequests {
  private readonly tally = new SummaryCacheTally();
  // Set once the provider refused the prefix request: the retries send bounded forks.
  private refused = false;

  constructor(private readonly s: LocalSummarySettings) {}

  /** The fork over the last request sent, or null when the bounded fork goes instead. */
  fork(): LocalFork | null {
    const choice = choosePrefix(this.s, this.refused);
    if (choice.kind === 'fork') {
      this.tally.chose('fork', choice.reason);
      return null;
    }
    this.tally.chose('prefix', null);
    const { prepared, maxOutputTokens } = choice;
    return { band: 'flat', prepared, inputTokens: prepared.inputTokens, prefix: { maxOutputTokens } };
  }

  /**
   * Both bands over the last request sent, each with instructions naming its part, or null when
   * the bounded bands go instead (the reason is reported). Both calls send the same prefix, so
   * the second reads back what the agent's request and the first call had the cache keep.
   */
  bands(bands: Pick<HierarchicalBands, 'detail'>): { older: LocalFork; newer: LocalFork } | null {
    const asks = wholeRequestBandInstructions(bands, this.s.instructions);
    if (asks === null) {
      // Nothing to name in the newer band: no reason to report when no request was sent either.
      const none = choosePrefix(this.s, this.refused);
      this.tally.chose('fork', none.kind === 'fork' ? none.reason : 'the newer band has no message to name');
      return null;
    }
    const older = choosePrefix(this.s, this.refused, {
      instructions: asks.older,
      maxOutput: Math.min(this.s.abstractMax, this.s.opts.summaryOutputLimit ?? this.s.abstractMax),
    });
    const newer = choosePrefix(this.s, this.refused, { instructions: asks.newer });
    if (older.kind === 'fork' || newer.kind === 'fork') {
      this.tally.chose(
        'fork',
        older.kind === 'fork' ? older.reason : newer.kind === 'fork' ? newer.reason : null,
      );
      return null;
    }
    this.tally.chose('prefix', null);
    const fork = (band: 'older' | 'newer', c: PrefixChoice & { kind: 'prefix' }): LocalFork => ({
      band,
      prepared: c.prepared,
      inputTokens: c.prepared.inputTokens,
      prefix: { maxOutputTokens: c.maxOutputTokens },
    });
    return { older: fork('older', older), newer: fork('newer', newer) };
  }

  /** Sends one call of `f`, counting its cache; a prefix request refused as too long is not sent again. */
  async send(f: LocalFork, call: () => Promise<SummaryResponse>): Promise<SummaryResponse> {
    try {
      const response = await call();
      this.tally.record(response);
      return response;
    } catch (e) {
      if (f.prefix !== undefined && ContextCapacityError.isInstance(e)) this.refused = true;
      throw e;
    }
  }

  report(): SummaryCacheReport | null {
    return this.tally.report();
  }
}
