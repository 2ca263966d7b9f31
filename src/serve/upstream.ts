import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import { HTTP_DEFAULTS, type HttpLimits } from '../providers/http-limits.js';
import { retryAfterMs } from '../providers/http.js';

/** What the upstream answered: status, headers and the body as it arrives. */
export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Dispatcher.ResponseData['body'];
  /** Attempts made (1 when the first one was answered). */
  attempts: number;
}

// Headers that belong to one connection, and ours, never go to the other side.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);
const OURS = /^x-compactor-/;

/** The client's headers as the upstream should get them (auth included; ours and hop-by-hop left out). */
export function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || OURS.test(name)) continue;
    // The proxy reads a compressed body decoded and sends it on as it read it.
    if (name === 'content-encoding') continue;
    out[name] = value;
  }
  // The body is passed through as it comes and may be read for usage: no compression.
  out['accept-encoding'] = 'identity';
  return out;
}

/** The upstream's response headers as the client should get them. */
export function returnedHeaders(
  headers: Dispatcher.ResponseData['headers'],
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || (HOP_BY_HOP.has(name) && name !== 'content-length')) continue;
    out[name] = value;
  }
  return out;
}

// Statuses a provider answers when trying again later may work.
const RETRY_STATUSES = new Set([408, 429, 500, 502, 503, 504, 529]);

/** Sends requests upstream with the time limits and retry budget of `compactor run`. */
export interface Upstream {
  send(
    url: string,
    init: { method: string; headers: Record<string, string | string[]>; body?: Buffer | Buffer[] | string },
    signal: AbortSignal,
  ): Promise<UpstreamResponse>;
  close(): Promise<void>;
}

export function createUpstream(limits: HttpLimits): Upstream {
  const agent = new Agent({ headersTimeout: limits.timeoutMs, bodyTimeout: limits.timeoutMs });
  return {
    async send(url, init, signal) {
      const started = Date.now();
      // Another attempt only while retries and the budget (its wait included) allow.
      const mayRetry = (attempt: number, wait: number) =>
        attempt <= limits.retries && Date.now() - started + wait <= limits.retryBudgetMs;
      // A body in pieces is written piece by piece: its length is said up front, not chunked.
      const { body } = init;
      const headers = Array.isArray(body)
        ? { ...init.headers, 'content-length': String(body.reduce((n, b) => n + b.length, 0)) }
        : init.headers;
      for (let attempt = 1; ; attempt++) {
        let wait = backoff(attempt);
        try {
          const res = await request(url, {
            method: init.method as Dispatcher.HttpMethod,
            headers,
            // A stream is read once: each attempt gets its own over the same pieces.
            body: Array.isArray(body) ? Readable.from(body, { objectMode: false }) : body,
            signal,
            dispatcher: agent,
          });
          if (RETRY_STATUSES.has(res.statusCode))
            wait = Math.min(retryAfterMs(res.headers) ?? wait, HTTP_DEFAULTS.retryAfterCapMs);
          if (!RETRY_STATUSES.has(res.statusCode) || !mayRetry(attempt, wait))
            return {
              status: res.statusCode,
              headers: returnedHeaders(res.headers),
              body: res.body,
              attempts: attempt,
            };
          await res.body.dump();
        } catch (e) {
          if (signal.aborted || !mayRetry(attempt, wait)) throw e;
        }
        await sleep(wait, undefined, { signal });
      }
    },
    close: () => agent.close(),
  };
}

function backoff(attempt: number): number {
  const { minRetryDelayMs, maxRetryDelayMs } = HTTP_DEFAULTS;
  return Math.min(maxRetryDelayMs, minRetryDelayMs * 2 ** (attempt - 1));
}
