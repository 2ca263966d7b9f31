import { charsCounter } from '#src/estimate/counters.js';
import { createEstimator, type Estimator } from '#src/estimate/estimator.js';
import { type Message } from '#src/messages/message.js';
import { BudgetError, ContextCapacityError } from '#src/core/errors.js';
import type { SummaryResponse } from '#src/providers/types.js';
import { summaryMessage } from '#src/summary/rebuild.js';
import type { LocalSummarizer, PreparedFork } from '#src/runtime/index.js';
import type { CompactionMode, SummaryBand } from '#machines/index.js';

/** A deterministic estimator (chars/4) so token numbers are stable without tiktoken. */
export const estimator: Estimator = createEstimator({ counter: charsCounter });

/** A fork of the fake summarizer: the newest messages that fit the budget. */
export interface FakeFork extends PreparedFork {
  messages: readonly Message[];
  budget: number | null;
}

/** Records every call; behaviour is set per test. */
export class FakeSummarizer implements LocalSummarizer<FakeFork> {
  readonly prepared: Array<{ history: readonly Message[]; budget: number | null }> = [];
  readonly requests: Array<{
    band: SummaryBand;
    inputTokens: number;
    budget: number | null;
    signal: AbortSignal;
  }> = [];
  /** Provider rejects forks above this many tokens (a capacity rejection, then a halved retry). */
  capacity = Infinity;
  /** Text the provider returns. */
  reply: (fork: FakeFork) => string = (fork) => `## Summary\n${fork.messages.length} messages summarized.`;
  /** Optional gate: the request waits for it (crash/cancel tests). */
  gate: Promise<void> | undefined;

  private fork(history: readonly Message[], budget: number | null): FakeFork {
    if (budget !== null && budget < 10) throw new BudgetError('summary input', 10, budget);
    const kept: Message[] = [];
    let tokens = 0;
    for (let i = history.length - 1; i >= 0; i--) {
      const t = estimator.message(history[i]!);
      if (budget !== null && tokens + t > budget) break;
      kept.unshift(history[i]!);
      tokens += t;
    }
    return { messages: kept, inputTokens: tokens, budget };
  }

  prepare(history: readonly Message[], budget: number | null): FakeFork {
    this.prepared.push({ history, budget });
    return this.fork(history, budget);
  }
  prepareBands(history: readonly Message[], budget: number | null) {
    this.prepared.push({ history, budget });
    const third = Math.floor(history.length / 3);
    return {
      older: this.fork(history.slice(0, third), budget),
      newer: this.fork(history.slice(third, 2 * third), budget),
    };
  }
  prepareBand(history: readonly Message[], band: 'older' | 'newer', budget: number | null): FakeFork {
    const third = Math.floor(history.length / 3);
    return this.fork(band === 'older' ? history.slice(0, third) : history.slice(third, 2 * third), budget);
  }
  async request(fork: FakeFork, band: SummaryBand, signal: AbortSignal): Promise<SummaryResponse> {
    this.requests.push({ band, inputTokens: fork.inputTokens, budget: fork.budget, signal });
    if (this.gate) await this.gate;
    signal.throwIfAborted();
    if (fork.inputTokens > this.capacity)
      throw new ContextCapacityError('context_length_exceeded', {
        provider: 'fake',
        model: 'fake-1',
        inputTokens: fork.inputTokens,
      });
    return { text: this.reply(fork), finishReason: 'stop' };
  }
  followsTemplate(text: string): boolean {
    return text.startsWith('## Summary');
  }
  rebuild(history: readonly Message[], summaries: readonly string[], _mode: CompactionMode): Message[] {
    return [summaryMessage(summaries.join('\n')), ...history.slice(-2)];
  }
}
