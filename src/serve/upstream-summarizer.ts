import { AsyncLocalStorage } from 'node:async_hooks';
import { EmptySummaryError, InternalError, ProviderError } from '../core/errors.js';
import type { ResolvedRoute } from '../providers/catalog.js';
import { dialectOf, type WireApi } from '../providers/dialects.js';
import type {
  NativeInlineClient,
  NativeStandaloneClient,
  SummaryClient,
  SummaryResponse,
} from '../providers/types.js';
import { compactPayload, readCompactAnswer } from '../providers/openai-responses/compact-client.js';
import { betasForPayload } from '../providers/anthropic/headers.js';
import { inlinePayload, readInlineAnswer } from '../providers/anthropic/inline-client.js';
import { REPLAY_BETAS, replayingBody, sendsCompactionBlock, withBetas } from './anthropic-native.js';
import { geminiSummaryBody, geminiSummaryUrl, readGeminiAnswer } from './gemini-summary.js';
import type { ProtocolName } from './protocols.js';
import type { Upstream } from './upstream.js';
import { summaryKey, type RequestSummaries } from './paid-summaries.js';

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
  /** The upstream's native compaction URL (`…/responses/compact`), for a request that compacts natively. */
  compactUrl?: string;
  /** The session's window (a request replaying an Anthropic compaction block declares an edit above it). */
  window: number;
  /** The summary answers of the request: a dropped request's retry gets them back instead of paying again. */
  summaries?: RequestSummaries;
}

const current = new AsyncLocalStorage<SummaryContext>();

/** The proxied request being projected; a provider call outside one is a bug. */
function currentContext(): SummaryContext {
  const c = current.getStore();
  if (c === undefined)
    throw new InternalError('compactor: a summary was asked for outside a proxied request');
  return c;
}

/** Runs `work` (a request's projection) so that summaries it needs go to that request's upstream. */
export function withSummaryContext<T>(context: SummaryContext, work: () => Promise<T>): Promise<T> {
  return current.run(context, work);
}

/** The wire dialect of each protocol the proxy serves: its summary body and how to read the answer. */
const DIALECT_OF: Record<Exclude<ProtocolName, 'gemini'>, WireApi> = {
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

/** Where a call of a proxied request reports its failures: the upstream of its protocol and its model. */
const siteOfContext = (c: SummaryContext) => ({
  provider: `upstream (${c.protocol})`,
  model: c.model,
  secrets: [] as string[],
});

/**
 * POSTs `body` to `url` with the client's headers and returns the JSON answer; any status but
 * 200, or an answer that is not JSON, fails the `what` call (so the session falls back).
 */
async function postUpstream(
  c: SummaryContext,
  url: string,
  body: unknown,
  what: string,
  signal: AbortSignal | undefined,
  headers = c.headers,
): Promise<unknown> {
  const site = siteOfContext(c);
  const sent = JSON.stringify(body);
  const key = c.summaries === undefined ? undefined : summaryKey(url, headers, sent);
  const reused = key === undefined ? undefined : c.summaries?.take(key);
  if (reused !== undefined) return JSON.parse(reused) as unknown;
  const res = await c.upstream.send(
    url,
    { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: sent },
    signal ?? c.signal,
  );
  const text = await res.body.text();
  if (res.status !== 200)
    throw new ProviderError(`${site.provider}/${site.model}: the ${what} call answered ${res.status}`, {
      ...site,
      status: res.status,
      retryable: false,
    });
  try {
    const answer = JSON.parse(text) as unknown;
    if (key !== undefined) c.summaries?.paidFor(key, text);
    return answer;
  } catch {
    throw new ProviderError(`${site.provider}/${site.model}: the ${what} answer is not JSON`, site);
  }
}

/** A summary with text in it; an empty one fails the call (the session falls back). */
function nonEmpty(summary: SummaryResponse, site: { provider: string; model: string }): SummaryResponse {
  if (summary.text.trim() === '') throw new EmptySummaryError({ provider: site.provider, model: site.model });
  return summary;
}

/**
 * Writes summaries with the model of the request being compacted, through its own upstream
 * and with its client's credentials (a Local summary: the proxy holds no key of its own).
 */
export function upstreamSummarizer(): SummaryClient {
  return {
    provider: 'upstream',
    model: 'the request model',
    followsRequestModel: true,
    async summarize(request, signal) {
      const c = currentContext();
      const site = siteOfContext(c);
      if (c.protocol === 'gemini') {
        const answer = await postUpstream(
          c,
          geminiSummaryUrl(c.url),
          geminiSummaryBody(request),
          'summary',
          signal,
        );
        return nonEmpty(readGeminiAnswer(answer, site), site);
      }
      const dialect = dialectOf(DIALECT_OF[c.protocol]);
      // The request carries the agent's system prompt and tools (the session reuses them for
      // its own model), which Anthropic requires of a summary of a tool loop.
      const written = dialect.body(routeOf(c.protocol), { ...request, model: c.model }, false);
      // A summary of a history that holds an Anthropic compaction block sends the block.
      const body = c.protocol === 'anthropic' ? replayingBody(written, c.window) : written;
      const replays = c.protocol === 'anthropic' && sendsCompactionBlock(body);
      const headers = replays ? withBetas(c.headers, REPLAY_BETAS) : c.headers;
      const answer = await postUpstream(c, c.url, body, 'summary', signal, headers);
      return nonEmpty(dialect.read(answer, site), site);
    },
  };
}

/**
 * Compacts through the upstream's own `/responses/compact` endpoint, with the model and the
 * client's credentials of the request being compacted (NativeStandalone; the proxy holds no key).
 */
export function upstreamCompactClient(): NativeStandaloneClient {
  return {
    provider: 'upstream',
    model: 'the request model',
    async compactStandalone(request, signal) {
      const c = currentContext();
      if (c.compactUrl === undefined)
        throw new InternalError('compactor: native compaction was asked for a request without an endpoint');
      const payload = compactPayload({ ...request, model: c.model });
      // Nothing to compact: no call, history unchanged.
      if ((payload.input as unknown[]).length === 0) return { items: [...request.input] };
      const answer = await postUpstream(c, c.compactUrl, payload, 'compact', signal);
      return readCompactAnswer(answer, siteOfContext(c));
    },
  };
}

/**
 * Compacts inside one Messages request of the upstream (the compact edit, paused after the
 * compaction), with the model and the client's credentials of the request being compacted
 * (NativeInline; the proxy holds no key). Any answer but a compaction block falls back to Local.
 */
export function upstreamInlineClient(): NativeInlineClient {
  return {
    provider: 'upstream',
    model: 'the request model',
    async compactInline(request, signal) {
      const c = currentContext();
      // The request carries the agent's own system prompt and tools (the API refuses tool blocks
      // without tools; the same prefix also lets the upstream's prompt cache serve it).
      const body = inlinePayload({ ...request, model: c.model });
      const headers = withBetas(c.headers, betasForPayload(body));
      const answer = await postUpstream(c, c.url, body, 'inline compaction', signal, headers);
      return readInlineAnswer(answer, siteOfContext(c));
    },
  };
}
