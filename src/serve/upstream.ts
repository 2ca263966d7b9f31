import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, type Dispatcher } from 'undici';
import { HTTP_DEFAULTS, type HttpLimits } from '../providers/http-limits.js';
import { retryAfterMs, shouldRetryHeader } from '../providers/http.js';
import { ArrivingBody } from './arriving-body.js';

/** What the upstream answered: status, headers and the body as it arrives. */
export type UpstreamResponse = UpstreamAnswer<ArrivingBody>;

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

/** A body in pieces as undici takes it: it writes any iterable of buffers, though its types name only streams. */
const asBody = (body: Outgoing['body']) => body as Dispatcher.DispatchOptions['body'];

/** A request as one attempt sends it (its headers with the length of a body in pieces). */
type Outgoing = UpstreamInit;

/** What one attempt got back: the answer's status and headers, its body, and how to let it go. */
interface Answered<B> {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  body: B;
  drop(): Promise<unknown>;
}

/**
 * One attempt's way of sending: `written` is called when the request goes to a connected
 * socket. An error before that (refused, DNS, TLS handshake, connect timeout) left the provider
 * without a byte of it; after that the provider may be working on it.
 */
type Attempt<B> = (
  url: string,
  out: Outgoing,
  signal: AbortSignal,
  written: () => void,
) => Promise<Answered<B>>;

// The origin and path of each upstream URL, split once (a server sends to a few URLs only).
const split = new Map<string, { origin: string; path: string }>();
function originAndPath(url: string): { origin: string; path: string } {
  let got = split.get(url);
  if (got === undefined) {
    const u = new URL(url);
    got = { origin: u.origin, path: `${u.pathname}${u.search}` };
    if (split.size >= 256) split.clear();
    split.set(url, got);
  }
  return got;
}

/** How an attempt reads an answer's body: it hears each chunk and the end (or a failure). */
interface BodyReader<B> {
  body: B;
  data(chunk: Buffer): void;
  end(e?: Error): void;
  drop(): Promise<unknown>;
}

/**
 * An attempt straight on the agent: no stream for the body, no wrapper around the dispatch.
 * The answer resolves with its status and headers, its body as `read` makes it; the signal is
 * heard only while the request is out.
 */
function dispatched<B>(
  agent: Agent,
  read: (controller: Dispatcher.DispatchController) => BodyReader<B>,
): Attempt<B> {
  return (url, out, signal, written) =>
    new Promise((resolveAnswer, rejectAnswer) => {
      let controller: Dispatcher.DispatchController | undefined;
      let reader: BodyReader<B> | undefined;
      const onAbort = () => controller?.abort(signal.reason as Error);
      if (signal.aborted) return rejectAnswer(signal.reason as Error);
      signal.addEventListener('abort', onAbort);
      const { origin, path } = originAndPath(url);
      agent.dispatch(
        {
          origin,
          path,
          method: out.method as Dispatcher.HttpMethod,
          headers: out.headers,
          body: asBody(out.body),
        },
        {
          onRequestStart(c) {
            controller = c;
            // Aborted while it waited for a connection: it goes no further.
            if (signal.aborted) c.abort(signal.reason as Error);
            else written();
          },
          onResponseStart(c, status, headers) {
            // An informational answer (100 Continue) comes before the answer itself.
            if (status < 200) return;
            reader = read(c);
            resolveAnswer({ status, headers, body: reader.body, drop: () => reader!.drop() });
          },
          onResponseData(_c, chunk) {
            reader?.data(chunk);
          },
          onResponseEnd() {
            signal.removeEventListener('abort', onAbort);
            reader?.end();
          },
          onResponseError(_c, e) {
            signal.removeEventListener('abort', onAbort);
            if (reader !== undefined) reader.end(e);
            else rejectAnswer(e);
          },
        },
      );
    });
}

/** An attempt whose answer's body is gathered whole: it resolves once it has all come. */
function gathered(agent: Agent): Attempt<Promise<Buffer>> {
  return dispatched(agent, () => {
    const chunks: Buffer[] = [];
    let done!: { resolve(b: Buffer): void; reject(e: Error): void };
    const body = new Promise<Buffer>((resolve, reject) => (done = { resolve, reject }));
    // A body nobody waits for (its answer dropped) fails quietly.
    body.catch(() => undefined);
    return {
      body,
      data: (chunk) => chunks.push(chunk),
      end: (e) =>
        e !== undefined
          ? done.reject(e)
          : done.resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)),
      drop: () => body.catch(() => undefined),
    };
  });
}

/** An attempt whose answer's body is read as it arrives. */
function streamed(agent: Agent): Attempt<ArrivingBody> {
  return dispatched(agent, (controller) => {
    const body = new ArrivingBody(controller);
    return { body, data: (c) => body.data(c), end: (e) => body.end(e), drop: () => body.dump() };
  });
}

/** An answer as the client should get it, with the body as the attempt read it. */
export interface UpstreamAnswer<B> {
  status: number;
  headers: Record<string, string | string[]>;
  body: B;
  /** Attempts made (1 when the first one was answered). */
  attempts: number;
}

/** What a request sends upstream. */
export interface UpstreamInit {
  method: string;
  headers: Record<string, string | string[]>;
  body?: Buffer | Buffer[] | string;
}

/** Sends requests upstream with the time limits and retry budget of `compactor run`. */
export interface Upstream {
  send(url: string, init: UpstreamInit, signal: AbortSignal): Promise<UpstreamResponse>;
  /** The same, for an answer read whole before it goes on (the body resolves once it has all come). */
  sendWhole(url: string, init: UpstreamInit, signal: AbortSignal): Promise<WholeResponse>;
  close(): Promise<void>;
}

/** An answer whose body is read whole: the bytes once they have all come. */
export type WholeResponse = UpstreamAnswer<Promise<Buffer>>;

/**
 * Sends a request again only when the provider surely did not act on it: it never got it (the
 * connection failed before the request was written), or it refused it (408, 429, 503, 529, or
 * `x-should-retry: true`). A timeout or a reset after the request went out, and any answer
 * that has begun, go to the client as they are: a second attempt could be paid twice.
 */
export function createUpstream(limits: HttpLimits): Upstream {
  const agent = new Agent({ headersTimeout: limits.timeoutMs, bodyTimeout: limits.timeoutMs });
  const sender =
    <B>(attempt: Attempt<B>) =>
    async (url: string, init: UpstreamInit, signal: AbortSignal): Promise<UpstreamAnswer<B>> => {
      const started = Date.now();
      // Another attempt only while retries and the budget (its wait included) allow.
      const mayRetry = (n: number, wait: number) =>
        n <= limits.retries && Date.now() - started + wait <= limits.retryBudgetMs;
      // A body in pieces is written piece by piece, its length said up front (not chunked): no
      // copy of the whole into fresh memory (dearer than a write per piece), and no stream.
      const body = Array.isArray(init.body) ? fewerPieces(init.body) : init.body;
      const headers = Array.isArray(body)
        ? { ...init.headers, 'content-length': String(body.reduce((n, b) => n + b.length, 0)) }
        : init.headers;
      const out = { method: init.method, headers, body };
      for (let n = 1; ; n++) {
        let wait = backoff(n);
        let written = false;
        try {
          const res = await attempt(url, out, signal, () => (written = true));
          const asked = retryAfterMs(res.headers);
          if (asked !== undefined) wait = asked;
          // A wait longer than the cap is the provider's to ask of the client, not ours to cut short.
          const again =
            retryableAnswer(res.status, res.headers) &&
            wait <= HTTP_DEFAULTS.retryAfterCapMs &&
            mayRetry(n, wait);
          if (!again)
            return { status: res.status, headers: returnedHeaders(res.headers), body: res.body, attempts: n };
          await res.drop();
        } catch (e) {
          const code = (e as { code?: unknown } | null)?.code;
          if (signal.aborted || written || REQUEST_ERRORS.has(code as string) || !mayRetry(n, wait)) throw e;
        }
        await sleep(wait, undefined, { signal });
      }
    };
  return { send: sender(streamed(agent)), sendWhole: sender(gathered(agent)), close: () => agent.close() };
}

/** Pieces this short are joined to the next: a short copy costs less than a write of its own. */
const SHORT_PIECE = 16 * 1024;

/** The pieces of a body with runs of short ones joined (the recall tool and the body's short end go as one write). */
function fewerPieces(pieces: readonly Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  let run: Buffer[] = [];
  let runLength = 0;
  const close = () => {
    if (run.length > 0) out.push(run.length === 1 ? run[0]! : Buffer.concat(run, runLength));
    run = [];
    runLength = 0;
  };
  for (const p of pieces) {
    if (p.length === 0) continue;
    if (runLength + p.length > SHORT_PIECE) close();
    if (p.length > SHORT_PIECE) out.push(p);
    else {
      run.push(p);
      runLength += p.length;
    }
  }
  close();
  return out;
}

function backoff(attempt: number): number {
  const { minRetryDelayMs, maxRetryDelayMs } = HTTP_DEFAULTS;
  return Math.min(maxRetryDelayMs, minRetryDelayMs * 2 ** (attempt - 1));
}
