import { AsyncLocalStorage } from 'node:async_hooks';
import { EmptySummaryError, InternalError, ProviderError } from '../core/errors.js';
import type { ResolvedRoute } from '../providers/catalog.js';
import { dialectOf, type WireApi } from '../providers/dialects.js';
import type { SummaryClient } from '../providers/types.js';
import type { ProtocolName } from './protocols.js';
import type { Upstream } from './upstream.js';

/** The proxied request a summary is written for: its upstream, model and the client's credentials. */
export interface SummaryContext {
  protocol: ProtocolName;
  model: string;
  /** The upstream URL of the request's own path. */
  url: string;
  /** The client's headers as they go upstream (its credential among them; never stored). */
  headers: Record<string, string | string[]>;
  upstream: Upstream;
  signal: AbortSignal;
  /** The output the client's request reserves (the window's budgets already leave room for it). */
  maxOutput?: number;
}

const current = new AsyncLocalStorage<SummaryContext>();

/** Runs `work` (a request's projection) so that summaries it needs go to that request's upstream. */
export function withSummaryContext<T>(context: SummaryContext, work: () => Promise<T>): Promise<T> {
  return current.run(context, work);
}

/** The wire dialect of each protocol the proxy serves: its summary body and how to read the answer. */
const DIALECT_OF: Record<ProtocolName, WireApi> = {
  anthropic: 'messages',
  'openai-chat': 'chat',
  'openai-responses': 'responses',
};

/**
 * The parts of a route a dialect reads to build a summary body: the provider kind (Chat
 * Completions names its output limit by it) and the room for a summary when the request sets
 * none (Anthropic Messages must send one).
 */
function routeOf(protocol: ProtocolName): ResolvedRoute {
  return {
    kind: protocol === 'anthropic' ? 'anthropic' : 'openai',
    maxOutputTokens: 4_096,
  } as ResolvedRoute;
}

/**
 * Writes summaries with the model of the request being compacted, through its own upstream
 * and with its client's credentials (a Local summary: the proxy holds no key of its own).
 */
export function upstreamSummarizer(): SummaryClient {
  return {
    provider: 'upstream',
    model: 'the request model',
    async summarize(request, signal) {
      const c = current.getStore();
      if (c === undefined)
        throw new InternalError('compactor: a summary was asked for outside a proxied request');
      const site = { provider: `upstream (${c.protocol})`, model: c.model };
      const dialect = dialectOf(DIALECT_OF[c.protocol]);
      const res = await c.upstream.send(
        c.url,
        {
          method: 'POST',
          headers: { ...c.headers, 'content-type': 'application/json' },
          body: JSON.stringify(dialect.body(routeOf(c.protocol), { ...request, model: c.model }, false)),
        },
        signal ?? c.signal,
      );
      const text = await res.body.text();
      if (res.status !== 200)
        throw new ProviderError(`${site.provider}/${site.model}: the summary call answered ${res.status}`, {
          ...site,
          status: res.status,
          retryable: false,
        });
      let answer: unknown;
      try {
        answer = JSON.parse(text);
      } catch {
        throw new ProviderError(`${site.provider}/${site.model}: the summary answer is not JSON`, site);
      }
      const summary = dialect.read(answer, { ...site, secrets: [] });
      if (summary.text.trim() === '') throw new EmptySummaryError(site);
      return summary;
    },
  };
}
