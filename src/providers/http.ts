import { setTimeout as sleep } from 'node:timers/promises';
import pRetry, { AbortError as RetryAbort } from 'p-retry';
import type { Dispatcher } from 'undici';
import { errorFactsFromBody, providerErrorFrom, type CallSite } from './classify-error.js';
import { ProviderError, RetryableProviderError } from '../core/errors.js';
import { boundedCause } from './redact.js';
import { parseSse, type SseEvent } from './sse.js';
import { HTTP_DEFAULTS, spokenDuration, startWaitingTicker, type HttpOptions } from './http-limits.js';

/** Transport knobs. Tests pass tiny delays; production uses the defaults ({@link HTTP_DEFAULTS}). */
export type { HttpOptions };

/**
 * The one HTTP layer every provider client uses: JSON POST (or SSE POST) over undici with
 * per-attempt timeouts, the caller's AbortSignal honoured, p-retry for transient failures
 * (408, 409, 429, 5xx, connection resets, timeouts) with bounded backoff that honours
 * `retry-after-ms` then `retry-after`, and every failure surfaced once as a bounded,
 * secret-free {@link ProviderError}. Error bodies are always consumed to free sockets.
 */

/** A POST to one provider endpoint. */
export interface PostSpec {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  site: CallSite;
}

const DEFAULTS = HTTP_DEFAULTS;

/** `retry-after-ms` (float ms) wins over `retry-after` (seconds or HTTP date). */
export function retryAfterMs(
  headers: Record<string, string | string[] | undefined>,
  now = Date.now(),
): number | undefined {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const ms = Number(first(headers['retry-after-ms']));
  if (Number.isFinite(ms) && ms >= 0 && first(headers['retry-after-ms']) !== undefined) return ms;
  const ra = first(headers['retry-after']);
  if (ra === undefined) return undefined;
  const secs = Number(ra);
  if (Number.isFinite(secs) && secs >= 0) return secs * 1000;
  const date = Date.parse(ra);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/** What a provider's `x-should-retry` header says: true, false, or nothing. */
export function shouldRetryHeader(
  headers: Record<string, string | string[] | undefined>,
): boolean | undefined {
  const said = headers['x-should-retry'];
  const word = Array.isArray(said) ? said[0] : said;
  return word === 'true' ? true : word === 'false' ? false : undefined;
}

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** Maps a thrown transport error to a ProviderError; abort by the caller is never retried. */
function transportError(
  err: unknown,
  site: CallSite,
  caller: AbortSignal | undefined,
  timeoutMs: number,
): Error {
  if (ProviderError.isInstance(err)) return err;
  if (caller?.aborted) {
    return new RetryAbort(
      new ProviderError(`${site.provider}/${site.model}: request aborted`, {
        provider: site.provider,
        model: site.model,
        code: 'aborted',
        retryable: false,
      }),
    );
  }
  const e = err as { name?: string; code?: string; message?: string };
  const timedOut =
    e?.name === 'TimeoutError' ||
    e?.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e?.code === 'UND_ERR_BODY_TIMEOUT' ||
    (e?.name === 'AbortError' && !caller?.aborted);
  if (timedOut) {
    return new RetryableProviderError(
      `${site.provider}/${site.model}: request timed out after ${spokenDuration(timeoutMs)}`,
      {
        provider: site.provider,
        model: site.model,
        code: 'timeout',
        retryable: true,
      },
    );
  }
  const code = e?.code && NETWORK_CODES.has(e.code) ? e.code : undefined;
  return new RetryableProviderError(
    `${site.provider}/${site.model}: connection failed${code ? ` (${code})` : ''}: ${boundedCause(e?.message ?? String(err), site.secrets, 160)}`,
    { provider: site.provider, model: site.model, code: code ?? 'network', retryable: true },
  );
}

/** Reads, classifies and throws a non-2xx response (the body is consumed here). */
async function throwHttpError(res: Dispatcher.ResponseData, site: CallSite): Promise<never> {
  let text = '';
  try {
    text = await res.body.text();
  } catch {
    await res.body.dump().catch(() => undefined);
  }
  const facts = errorFactsFromBody(res.statusCode, text.slice(0, 64_000));
  const retryable = shouldRetryHeader(res.headers);
  const err = providerErrorFrom(site, facts, retryable === undefined ? {} : { retryable });
  if (err.info.retryable) {
    const r = new RetryableProviderError(err.message, err.info);
    r.retryAfterMs = retryAfterMs(res.headers);
    throw r;
  }
  throw new RetryAbort(err);
}

type AttemptFn<T> = (signal: AbortSignal, timeoutMs: number) => Promise<T>;

/** One call's ladder: its options with defaults, start time and budget left. */
interface Ladder {
  o: Required<Omit<HttpOptions, 'dispatcher' | 'onRetry' | 'onWaiting'>> & HttpOptions;
  site: CallSite;
  caller: AbortSignal | undefined;
  started: number;
  attempts: number;
  left(): number;
}

/** Attempt `n`: at most `timeoutMs` and never past the budget, with waiting notes meanwhile. */
async function runAttempt<T>(ladder: Ladder, n: number, attempt: AttemptFn<T>): Promise<T> {
  const { o, site, caller } = ladder;
  const timeoutMs = Math.max(1, Math.min(o.timeoutMs, ladder.left()));
  const signals = [AbortSignal.timeout(timeoutMs)];
  if (caller) signals.push(caller);
  const onWaiting = o.onWaiting;
  const stopTicker = onWaiting
    ? startWaitingTicker(o.progressIntervalMs, () =>
        onWaiting({
          provider: site.provider,
          model: site.model,
          attempt: n,
          attempts: ladder.attempts,
          elapsedMs: Date.now() - ladder.started,
        }),
      )
    : () => undefined;
  try {
    return await attempt(AbortSignal.any(signals), timeoutMs);
  } catch (err) {
    if (err instanceof RetryAbort) throw err;
    if (ProviderError.isInstance(err) && !err.info.retryable) throw new RetryAbort(err);
    throw transportError(err, site, caller, timeoutMs);
  } finally {
    stopTicker();
  }
}

/** The one error a call ends with; a ladder that gave up says how many attempts took how long. */
function finalError(ladder: Ladder, made: number, err: unknown): Error {
  const { o } = ladder;
  // Drop the retry-only subclass so callers see plain ProviderError/ContextCapacityError.
  if (RetryableProviderError.isInstance(err))
    return new ProviderError(
      `${err.message} (gave up after ${made} of ${ladder.attempts} attempts in ${spokenDuration(Date.now() - ladder.started)}; limits: ${spokenDuration(o.timeoutMs)} per request, ${spokenDuration(o.retryBudgetMs)} in all)`,
      err.info,
    );
  if (ProviderError.isInstance(err)) return err;
  const mapped = transportError(err, ladder.site, ladder.caller, o.timeoutMs);
  return mapped instanceof RetryAbort
    ? (mapped as RetryAbort & { originalError: Error }).originalError
    : mapped;
}

/**
 * Runs one logical call with retries; returns its value or throws one ProviderError. The
 * whole ladder is bounded: at most `retries + 1` attempts, each at most `timeoutMs`, and all
 * of them with the waits between them within `retryBudgetMs` (the last attempt gets what is left).
 */
async function withRetry<T>(
  site: CallSite,
  opts: HttpOptions,
  caller: AbortSignal | undefined,
  attempt: AttemptFn<T>,
): Promise<T> {
  const o = { ...DEFAULTS, ...opts };
  const started = Date.now();
  const left = () => o.retryBudgetMs - (Date.now() - started);
  const ladder: Ladder = { o, site, caller, started, attempts: o.retries + 1, left };
  let made = 0;
  try {
    return await pRetry((n) => runAttempt(ladder, (made = n), attempt), {
      retries: o.retries,
      minTimeout: o.minRetryDelayMs,
      maxTimeout: o.maxRetryDelayMs,
      maxRetryTime: o.retryBudgetMs,
      factor: 2,
      signal: caller,
      onFailedAttempt: ({ error, attemptNumber }) =>
        opts.onRetry?.(`attempt ${attemptNumber} failed: ${boundedCause(error.message, site.secrets)}`),
      // Server-requested delay first (capped, and never past the budget); p-retry's own bounded backoff follows.
      shouldRetry: async ({ error }) => {
        const wait = (error as RetryableProviderError).retryAfterMs;
        if (wait !== undefined && wait > 0)
          await sleep(Math.max(0, Math.min(wait, o.retryAfterCapMs, left())), undefined, { signal: caller });
        return left() > 0;
      },
    });
  } catch (err) {
    throw finalError(ladder, made, err);
  }
}

async function send(
  spec: PostSpec,
  accept: string,
  signal: AbortSignal,
  timeoutMs: number,
  dispatcher: Dispatcher | undefined,
) {
  // undici (about a hundred modules) loads with the first request, not with every command:
  // offline runs and commands that never call a provider do not pay for it.
  const { request } = await import('undici');
  const res = await request(spec.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...spec.headers },
    body: JSON.stringify(spec.body),
    signal,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    ...(dispatcher ? { dispatcher } : {}),
  });
  if (res.statusCode < 200 || res.statusCode >= 300) await throwHttpError(res, spec.site);
  return res;
}

/** POSTs JSON and returns the parsed JSON body. Malformed JSON is a non-retryable ProviderError. */
export function postJson(spec: PostSpec, opts: HttpOptions = {}, signal?: AbortSignal): Promise<unknown> {
  return withRetry(spec.site, opts, signal, async (s, timeoutMs) => {
    const res = await send(spec, 'application/json', s, timeoutMs, opts.dispatcher);
    const text = await res.body.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ProviderError(
        `${spec.site.provider}/${spec.site.model}: HTTP ${res.statusCode}: response body is not valid JSON (${text.length} bytes)`,
        {
          provider: spec.site.provider,
          model: spec.site.model,
          status: res.statusCode,
          code: 'malformed_json',
          retryable: false,
        },
      );
    }
  });
}

/**
 * POSTs and consumes an SSE stream with `consume`, which folds the events into one value
 * (streaming-only routes). A stream that ends early is retried as transient.
 */
export function postSse<T>(
  spec: PostSpec,
  consume: (events: AsyncIterable<SseEvent>) => Promise<T>,
  opts: HttpOptions = {},
  signal?: AbortSignal,
): Promise<T> {
  return withRetry(spec.site, opts, signal, async (s, timeoutMs) => {
    const res = await send(spec, 'text/event-stream', s, timeoutMs, opts.dispatcher);
    try {
      return await consume(parseSse(res.body));
    } finally {
      await res.body.dump().catch(() => undefined);
    }
  });
}

/** Error for a stream that closed before its terminal event (Codex: transport error). */
export function truncatedStream(site: CallSite, what: string): ProviderError {
  return new RetryableProviderError(`${site.provider}/${site.model}: stream closed before ${what}`, {
    provider: site.provider,
    model: site.model,
    code: 'stream_truncated',
    retryable: true,
  });
}
