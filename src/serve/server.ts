import { createPaidSummaries } from './paid-summaries.js';
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConversations } from '../adapters/shared/conversations.js';
import { RequestRefusedError, UserError } from '../core/errors.js';
import { httpLimits } from '../providers/http-limits.js';
import { handleCountTokens } from './count-tokens.js';
import { handleCompacting, type CompactingContext, type LastRequest, type NativeKind } from './compacting.js';
import { readBody, relayResponse, sendJsonText } from './http-io.js';
import { createServeMetrics, type ServeMetrics } from './metrics.js';
import { resolveServeOptions, type ResolvedServeOptions, type ServeOptions } from './options.js';
import { errorBody, errorProtocolOfPath, protocolOfPath, type ProtocolName } from './protocols.js';
import { pathOf, sessionIdOfSegment } from './request-guards.js';
import { restateConversations } from './restate-sessions.js';
import { createSessionIndex } from './session-index.js';
import { KEPT_BODIES_BYTES, KeptBodies } from './body-reuse.js';
import { SESSION_ID_RULE, validSessionId } from './session-id.js';
import { sessionState } from './sessions-endpoint.js';
import { createUpstream, forwardedHeaders } from './upstream.js';
import { geminiCall } from './gemini.js';
import { holdIdleConnections } from './keep-alive.js';
import { placeRequest } from './placement.js';
import { upstreamSummarizer } from './upstream-summarizer.js';
import { loadCatalogFile, lookupModel } from '../providers/catalog.js';
import { PROVIDER_PRESETS } from '../providers/catalog-data.js';
import { selectStrategy } from '../providers/strategy.js';
import { claimDataDir } from '../session/index.js';
import { tiktokenCounter } from '../estimate/index.js';

/** A running proxy. */
export interface RunningServer {
  /** Where it listens: `http://HOST:PORT` (the port it got when asked for 0). */
  url: string;
  /** Stops taking requests, lets the ones in flight finish, then closes every session. */
  close(): Promise<void>;
  /** What the operator should know from the start (one line each), e.g. a data directory made private. */
  notices: readonly string[];
}

/** The upstream URL of a request path: the client's path below the upstream's base (`/v1` once). */
function upstreamUrlOf(base: string, pathAndQuery: string): string {
  const trimmed = base.replace(/\/+$/, '');
  const under = pathAndQuery.startsWith('/v1/') || pathAndQuery === '/v1';
  return under && trimmed.endsWith('/v1') ? trimmed + pathAndQuery.slice(3) : trimmed + pathAndQuery;
}

/** The status and one-line message a failed request is answered with. */
function failureAnswer(e: unknown): [number, string] {
  if (RequestRefusedError.isInstance(e)) return [e.status, `compactor: ${e.message}`];
  // Error codes come as strings (ECONNRESET, UND_ERR_…) or numbers (an abort's DOMException code).
  const code = (e as { code?: unknown } | null | undefined)?.code;
  const message = e instanceof Error ? e.message : String(e);
  if (typeof code === 'string' && (code.startsWith('UND_ERR') || /^E[A-Z]+$/.test(code)))
    return [502, `compactor: the upstream did not answer (${message})`];
  return [500, `compactor: ${message}`];
}

// Names no pid, host or path: the message may reach a client's log or a shared terminal.
const DATA_DIR_BUSY =
  'serve: the data directory is in use by another compactor serve; stop that one first or give another --data-dir';

const LOCAL_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]', '0.0.0.0', '[::]']);

/**
 * An upstream that is this server itself (a shell that already points ANTHROPIC_BASE_URL or
 * OPENAI_BASE_URL at the proxy starts it): every request would come back forever.
 */
function selfUpstream(o: ResolvedServeOptions, port: number): string | undefined {
  const own = (url: string) => {
    const u = new URL(url);
    const p = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    return p === port && (LOCAL_NAMES.has(u.hostname) || u.hostname === o.host);
  };
  for (const [name, url, variable] of [
    ['Anthropic', o.anthropicUpstream, 'ANTHROPIC_BASE_URL'],
    ['OpenAI', o.openaiUpstream, 'OPENAI_BASE_URL'],
    ['Gemini', o.geminiUpstream, 'GOOGLE_GEMINI_BASE_URL'],
  ] as const)
    if (own(url))
      return `serve: the ${name} upstream ${url} is this server itself (is ${variable} set to the proxy in this shell?); give --${name.toLowerCase()}-upstream`;
  return undefined;
}

/** The provider behind each protocol that compacts natively, and the hosts trusted without a catalog file. */
const NATIVE_PROVIDERS: Partial<Record<ProtocolName, { provider: string; hosts: string[] }>> = {
  'openai-responses': { provider: 'openai', hosts: PROVIDER_PRESETS.openai.nativeHosts },
  anthropic: { provider: 'anthropic', hosts: ['api.anthropic.com'] },
};

/**
 * How requests compact through their upstream natively: OpenAI Responses requests through
 * `/responses/compact`, Anthropic Messages requests with the compact edit, when the catalog
 * allows it for the model and the upstream's host is trusted (a host other than the
 * provider's own must be listed under the catalog file's `nativeHosts` of that provider).
 */
function nativeCompactionOf(
  o: ResolvedServeOptions,
): (protocol: ProtocolName, model: string) => NativeKind | undefined {
  if (o.summarizer !== 'upstream') return () => undefined;
  const user = o.catalog !== undefined ? loadCatalogFile(o.catalog) : {};
  return (protocol, model) => {
    const native = NATIVE_PROVIDERS[protocol];
    if (native === undefined) return undefined;
    const { provider } = native;
    const baseUrl = upstreamOf(o, protocol);
    const trusted = [...native.hosts, ...(user.providers?.[provider]?.nativeHosts ?? [])];
    if (!onTrustedHost(baseUrl, trusted)) return undefined;
    const entry = lookupModel(provider, provider, model, user.models ?? []);
    const route = {
      provider,
      model,
      baseUrl,
      nativeHosts: trusted,
      ...(entry?.nativeCompaction !== undefined ? { nativeCompaction: entry.nativeCompaction } : {}),
    };
    const kind = selectStrategy(route).kind;
    return kind === 'nativeStandalone' || kind === 'nativeInline' ? kind : undefined;
  };
}

/** Whether a URL's host is one of `trusted` or below one of them. */
function onTrustedHost(url: string, trusted: readonly string[]): boolean {
  const host = new URL(url).hostname.toLowerCase();
  return trusted.some((t) => host === t.toLowerCase() || host.endsWith(`.${t.toLowerCase()}`));
}

/** The upstream a protocol's requests go to. */
function upstreamOf(o: ResolvedServeOptions, protocol: ProtocolName): string {
  if (protocol === 'anthropic') return o.anthropicUpstream;
  return protocol === 'gemini' ? o.geminiUpstream : o.openaiUpstream;
}

/** Everything one server's requests share. */
interface ServerParts extends CompactingContext {
  options: ResolvedServeOptions;
}

function serverParts(o: ResolvedServeOptions, metrics: ServeMetrics): ServerParts {
  const { policy, ...shared } = o.session;
  const index = createSessionIndex(o.dataDir);
  const lastRequests = new Map<string, LastRequest>();
  // The last bodies kept for the sessions' next requests take a quarter of --max-memory at
  // most (and 40 MiB at most): the sessions hold the rest.
  const bodyBytes = Math.min(KEPT_BODIES_BYTES, (o.maxSessionBytes ?? Infinity) / 4);
  const bodies = new KeptBodies(bodyBytes);
  const conversationOptions = {
    ...shared,
    limits: { ...o.session.limits, ...(o.capacity !== undefined ? { capacity: o.capacity } : {}) },
    ...(o.dataDir !== undefined ? { sessionDir: o.dataDir } : {}),
    ...(o.http ? { http: o.http } : {}),
    maxConversations: o.maxSessions,
    ...(o.maxSessionBytes !== undefined ? { maxBytes: o.maxSessionBytes - bodyBytes } : {}),
    // A closed session keeps nothing here; its next request finds it again by its opening or id.
    onEvict: (id: string) => {
      index.forget(id);
      lastRequests.delete(id);
      bodies.forget(id);
    },
    ...(o.summarizer === 'upstream' ? { summarizer: upstreamSummarizer() } : {}),
  };
  // On Restate each request is a call of its session's object; the worker runs the turn.
  const conversations =
    o.restateIngress === undefined
      ? createConversations(conversationOptions)
      : restateConversations(o.restateIngress, conversationOptions);
  return {
    options: o,
    conversations,
    // On Restate the turns run on a worker: counting ahead here would count twice.
    countsAhead: o.restateIngress === undefined,
    index,
    metrics,
    upstream: createUpstream(httpLimits(o.http ?? {})),
    upstreamUrl: (protocol: ProtocolName, path: string) => upstreamUrlOf(upstreamOf(o, protocol), path),
    ...(o.capacity !== undefined ? { capacity: o.capacity } : {}),
    ...(policy !== undefined ? { policy } : {}),
    maxBodyBytes: o.maxBodyBytes,
    nativeCompaction: nativeCompactionOf(o),
    summarizer: o.summarizer,
    ...(o.log !== undefined ? { log: o.log } : {}),
    lastRequests,
    paidSummaries: createPaidSummaries(),
    // On Restate the worker reads the session: the proxy keeps no bodies.
    ...(o.restateIngress === undefined ? { bodies } : {}),
  };
}

/** Answers one request; resolves to the protocol and outcome it is counted under. */
async function route(
  p: ServerParts,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<[string, string]> {
  const path = pathOf(req.url);
  const method = req.method ?? 'GET';
  const token = p.options.authToken;
  if (token !== undefined && req.headers['x-compactor-token'] !== token) {
    const shape = errorProtocolOfPath(path);
    sendJsonText(res, 401, errorBody(shape, 401, 'compactor: missing or wrong x-compactor-token header'));
    return ['other', 'unauthorized'];
  }
  if (method === 'GET' && path === '/metrics') {
    const text = await p.metrics.registry.metrics();
    res.writeHead(200, { 'content-type': p.metrics.registry.contentType }).end(text);
    return ['other', 'metrics'];
  }
  const sessionPath = /^\/compactor\/sessions\/([^/]+)$/.exec(path);
  if (method === 'GET' && sessionPath) {
    const id = validSessionId(sessionIdOfSegment(sessionPath[1]));
    if (id === undefined) {
      sendJsonText(res, 400, JSON.stringify({ error: { message: `compactor: ${SESSION_ID_RULE}` } }));
      return ['other', 'session'];
    }
    const state = await sessionState(p.conversations, id, p.lastRequests.get(id), p.summarizer, signal);
    if (state === undefined)
      sendJsonText(res, 404, JSON.stringify({ error: { message: `compactor: no session "${id}"` } }));
    else sendJsonText(res, 200, JSON.stringify(state, null, 2));
    return ['other', 'session'];
  }
  // Agents check that their base URL answers before the first request (Claude Code sends
  // `HEAD /`): the proxy answers for itself, and nothing goes upstream.
  if ((method === 'HEAD' || method === 'GET') && path === '/') {
    sendJsonText(res, 200, JSON.stringify({ service: 'compactor serve', status: 'ok' }));
    return ['other', 'root'];
  }
  if (method === 'POST' && path === '/v1/messages/count_tokens')
    return ['anthropic', await handleCountTokens(p, req, res, signal)];
  if (method === 'POST' && geminiCall(path)?.method === 'countTokens')
    return ['gemini', await handleCountTokens(p, req, res, signal, 'gemini')];
  const protocol = protocolOfPath(method, path);
  if (protocol !== undefined) return [protocol, await handleCompacting(p, protocol, req, res, signal)];
  // Every other path (model lists …) goes as it came, to its own protocol's upstream only.
  const place = placeRequest(method, req.url ?? '/', req.headers);
  if ('refused' in place) {
    sendJsonText(res, 404, errorBody(errorProtocolOfPath(path), 404, place.refused));
    return ['other', 'refused-404'];
  }
  const target = p.upstreamUrl(place.protocol, req.url ?? '/');
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const headers = forwardedHeaders(req.headers);
  const body = hasBody ? await readBody(req, p.maxBodyBytes) : undefined;
  const answer = await p.upstream.send(target, { method, headers, ...(body ? { body } : {}) }, signal);
  await relayResponse(res, answer, {});
  return ['other', 'forwarded'];
}

/** Counts a request that failed and answers it in its protocol's error shape. */
function answerFailure(
  metrics: ServeMetrics,
  req: IncomingMessage,
  res: ServerResponse,
  e: unknown,
  log?: (line: string) => void,
): void {
  const path = pathOf(req.url);
  const shape = protocolOfPath(req.method ?? 'GET', path) ?? errorProtocolOfPath(path);
  metrics.requests.inc({ protocol: shape, outcome: 'failed' });
  const [status, message] = failureAnswer(e);
  // The message is the bounded, secret-free one the client gets (a failed summary call names its cause).
  log?.(`failed (${status}): ${shape} ${path}: ${message}`);
  if (status === 502) metrics.upstreamErrors.inc({ protocol: shape, status: 'none' });
  sendJsonText(res, status, errorBody(shape, status, message));
}

/** Counts a request whose client went away before its answer was complete; nobody is left to answer. */
function countAbort(metrics: ServeMetrics, req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url ?? '/', 'http://proxy').pathname;
  // The protocol the request would have been counted under had it been answered.
  const counted =
    protocolOfPath(req.method ?? 'GET', path) ??
    (path === '/v1/messages/count_tokens' ? 'anthropic' : 'other');
  metrics.requests.inc({ protocol: counted, outcome: 'aborted' });
  res.destroy();
}

/** The request listener, and the requests it is serving (a close waits for them). */
function listener(p: ServerParts): { handle: RequestListener; inFlight: Set<Promise<void>> } {
  const inFlight = new Set<Promise<void>>();
  const handle: RequestListener = (req, res) => {
    const started = process.hrtime.bigint();
    const aborted = new AbortController();
    // The client went away before its answer was complete: the upstream request and any
    // summary call it waits for stop too.
    res.on('close', () => {
      if (!res.writableFinished) aborted.abort();
    });
    // A client gone mid-request shows up as errors on its own streams; they end only its request.
    req.on('error', () => aborted.abort());
    res.on('error', () => aborted.abort());
    const done = route(p, req, res, aborted.signal)
      .then(([protocol, outcome]) => {
        p.metrics.requests.inc({ protocol, outcome: aborted.signal.aborted ? 'aborted' : outcome });
        p.metrics.requestSeconds.observe({ protocol }, Number(process.hrtime.bigint() - started) / 1e9);
      })
      .catch((e: unknown) => {
        if (aborted.signal.aborted) countAbort(p.metrics, req, res);
        else answerFailure(p.metrics, req, res, e, p.log);
      })
      // Nothing a request does may end the process: a failure while answering a failure is dropped.
      .catch(() => void res.destroy())
      .finally(() => inFlight.delete(done));
    inFlight.add(done);
  };
  return { handle, inFlight };
}

/**
 * Starts `compactor serve`: a proxy in front of Anthropic- and OpenAI-shaped upstreams that
 * keeps every conversation it sees in a session, fits each request to the model's window and
 * forwards it. Resolves once it listens.
 */
export async function startServer(options: ServeOptions = {}): Promise<RunningServer> {
  const o = resolveServeOptions(options);
  const claim = o.dataDir === undefined ? undefined : claimDataDir(o.dataDir, DATA_DIR_BUSY);
  let parts: ServerParts;
  try {
    parts = serverParts(o, await createServeMetrics());
  } catch (e) {
    claim?.release();
    throw e;
  }
  // The tokenizer takes a second or more to load and blocks while it does: loaded before the
  // first request, it never holds the first clients' requests.
  tiktokenCounter('o200k_base');
  const { handle, inFlight } = listener(parts);
  const server = createServer(handle);
  holdIdleConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (e: unknown) => {
    await parts.conversations.close();
    await parts.upstream.close();
    claim?.release();
    throw e;
  });
  const { port } = server.address() as AddressInfo;
  const loop = selfUpstream(o, port);
  if (loop !== undefined) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await parts.conversations.close();
    await parts.upstream.close();
    claim?.release();
    throw new UserError(loop);
  }
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // Requests already being served finish; their connections close once they have.
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
        server.closeAllConnections();
        await stopped;
        await parts.conversations.close();
        await parts.upstream.close();
        claim?.release();
      })();
      return closing;
    },
    notices:
      claim?.tightenedFrom === undefined
        ? []
        : [
            `the data directory let other users in (mode ${claim.tightenedFrom.toString(8)}); it is now readable by its owner only`,
          ],
  };
}
