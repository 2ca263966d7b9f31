import type { SummaryBand } from '../../../machines/index.js';
import type { Estimator } from '../../estimate/estimator.js';
import type { Budgets } from '../../projection/budgets.js';
import type { RequestFields } from '../../providers/request-fields.js';
import type { SummaryClient, ToolSchema } from '../../providers/types.js';
import type { PreparedSummary } from '../../summary/prepare.js';
import type { SummaryWarning } from '../../summary/repair.js';
import type { Message } from '../../messages/message.js';
import type { LocalSummarizer, PreparedFork } from './local-summarizer.js';
import type { SummaryCacheReport } from './summary-prefix.js';

// The public types of createLocalSummarizer, on their own so the files that implement it share
// them without importing the factory.

/** Options of {@link createLocalSummarizer}. */
export interface LocalSummarizerOptions {
  /** The summary client of the route (HTTP or the offline summarizer). */
  client: SummaryClient;
  estimator: Estimator;
  /** `resolveBudgets(limits)`: capacity (output bounding) and continuity tail are read. */
  budgets: Pick<Budgets, 'capacity' | 'continuityTailTokens'>;
  /** Model named in the request (default `client.model`). */
  model?: string;
  /** Frozen system prompt; pass it only when provider and model match the parent envelope. */
  system?: string;
  /** Frozen tool catalog (sent with tool use disabled); same rule as `system`. */
  tools?: ToolSchema[];
  /** The caller's own request fields; the summary request forwards the cache/tier ones. */
  requestFields?: RequestFields;
  /** Output tokens the summary call asks for (the limits' `summaryOutputLimit`; default: by window). */
  summaryOutputLimit?: number;
  /** Custom `/compact` instructions, appended to the summary prompt. */
  instructions?: string;
  /** Summary prompt version (default summary-v1). */
  promptVersion?: string;
  /**
   * Output cap of the abstract (older) band, default VT Code's 150 (the offline summarizer
   * answers that band in a condensed form that fits it).
   */
  abstractMaxOutputTokens?: number;
  /**
   * Re-injection budget (default 0: off; `defaultReinjectBudget(capacity)` gives
   * min(4,000, floor(capacity × 0.05))). Capped by room left in the rebuilt window.
   */
  reinjectBudgetTokens?: number;
  /** Output tokens the next request reserves (bounds the rebuilt history). */
  reservedOutput?: number;
  /** Frozen system + tool schema tokens of the next request (bounds the rebuilt history). */
  prefixTokens?: number;
  /**
   * The messages of the last request sent to the model that writes the summary, as sent. When
   * given and it fits, a flat summary is asked for over exactly these messages plus the
   * instructions, so the provider's prompt cache serves them; else over a bounded fork.
   */
  lastRequest?: readonly Message[];
  /**
   * The provider's count of that request's whole input, when it reported one: the window check
   * trusts it over the estimate, which can fall a few percent short.
   */
  lastRequestTokens?: number;
}

/** A fork prepared by {@link createLocalSummarizer}: the summary pipeline's fork plus its band. */
export interface LocalFork extends PreparedFork {
  readonly band: SummaryBand;
  readonly prepared: PreparedSummary;
  /** Set when the fork is the last request sent, unchanged: the output its summary may ask for. */
  readonly prefix?: { readonly maxOutputTokens: number | undefined };
}

/** The summarizer, plus the template warnings of the pass it is running. */
export interface LocalSummarizerWithWarnings extends LocalSummarizer<LocalFork> {
  warnings(): SummaryWarning[];
  /** How the pass's summary request was built and the cached share of its calls; null before any. */
  summaryCache(): SummaryCacheReport | null;
}
