import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import { HTTP_DEFAULTS, type HttpLimits } from '../providers/http-limits.js';
import { retryAfterMs, shouldRetryHeader } from '../providers/http.js';

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

// Statuses by which a provider refused a request without acting on it: later may work.
// A 500, 502 or 504 may come after the provider started (and billed) the work, so it goes
// to the client as it came, and the client's own retry decides.
const REFUSED_STATUSES = new Set([408, 429, 503, 529]);

/** Whether an answer may be sent again: the provider's own `x-should-retry` first, then its status. */
function retryableAnswer(status: number, headers: Dispatcher.ResponseData['headers']): boolean {
  if (status < 400) return false;
  return shouldRetryHeader(headers) ?? REFUSED_STATUSES.has(status);
}

// Errors that say the request itself is wrong: another attempt fails the same way.
const REQUEST_ERRORS = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED']);

/**
 * The agent as one attempt uses it, calling `written` when the request goes to a connected
 * socket. An error before that (refused, DNS, TLS handshake, connect timeout) left the
 * provider without a byte of it; after that the provider may be working on it.
 */
function watched(agent: Agent, written: () => void): Dispatcher {
  return agent.compose(
    (dispatch) => (opts, handler) =>
      dispatch(opts, {
        onRequestStart: (controller, context: unknown) => {
          written();
          handler.onRequestStart?.(controller, context);
        },
        onRequestUpgrade: (...a) => handler.onRequestUpgrade?.(...a),
        onResponseStart: (...a) => handler.onResponseStart?.(...a),
        onResponseData: (...a) => handler.onResponseData?.(...a),
        onResponseEnd: (...a) => handler.onResponseEnd?.(...a),
        onResponseError: (...a) => handler.onResponseError?.(...a),
      }),
  );
}

/** Sends requests upstream with the time limits and retry budget of `compactor run`. */
export interface Upstream {
  send(
    url: string,
    init: { method: string; headers: Record<string, string | string[]>; body?: Buffer | Buffer[] | string },
    signal: AbortSignal,
  ): Promise<UpstreamResponse>;
  close(): Promise<void>;
}

/**
 * Sends a request again only when the provider surely did not act on it: it never got it (the
 * connection failed before the request was written), or it refused it (408, 429, 503, 529, or
 * `x-should-retry: true`). A timeout or a reset after the request went out, and any answer
 * that has begun, go to the client as they are: a second attempt could be paid twice.
 */
export function createUpstream(limits: HttpLimits): Upstream {
  const agent = new Agent({ headersTimeout: limits.timeoutMs, bodyTimeout: limits.timeoutMs });
  return {
    async send(url, init, signal) {
      const started = Date.now();
      // Another attempt only while retries and the budget (its wait included) allow.
      const mayRetry = (attempt: number, wait: number) =>
        attempt <= limits.retries && Date.now() - started + wait <= limits.retryBudgetMs;
      // A body in pieces goes as one buffer: one write to the socket with its head, where a
      // stream of the pieces costs a write (and a wake-up of the upstream) per piece.
      const body = Array.isArray(init.body) ? Buffer.concat(init.body) : init.body;
      const { headers } = init;
      for (let attempt = 1; ; attempt++) {
        let wait = backoff(attempt);
        let written = false;
        try {
          const res = await request(url, {
            method: init.method as Dispatcher.HttpMethod,
            headers,
            body,
            signal,
            dispatcher: watched(agent, () => (written = true)),
          });
          const asked = retryAfterMs(res.headers);
          if (asked !== undefined) wait = asked;
          // A wait longer than the cap is the provider's to ask of the client, not ours to cut short.
          const again =
            retryableAnswer(res.statusCode, res.headers) &&
            wait <= HTTP_DEFAULTS.retryAfterCapMs &&
            mayRetry(attempt, wait);
          if (!again)
            return {
              status: res.statusCode,
              headers: returnedHeaders(res.headers),
              body: res.body,
              attempts: attempt,
            };
          await res.body.dump();
        } catch (e) {
          const code = (e as { code?: unknown } | null)?.code;
          if (signal.aborted || written || REQUEST_ERRORS.has(code as string) || !mayRetry(attempt, wait))
            throw e;
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
