import type { IncomingMessage, ServerResponse } from 'node:http';
import { recordProviderUsage } from '../adapters/shared/usage.js';
import { catalogCapacity, type ConversationProjection } from '../adapters/shared/conversations.js';
import type { ProxyConversations } from './kept-conversation.js';
import { RequestRefusedError, UserError, WindowTooSmallError } from '../core/errors.js';
import type { ClearingPolicy } from '../projection/index.js';
import type { Estimator } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import type { ServeMetrics } from './metrics.js';
import { errorBody, parseRequest, writeRequest, type ParsedRequest, type ProtocolName } from './protocols.js';
import type { SessionIndex } from './session-index.js';
import { requestChain, type RequestChain } from './hash-chain.js';
import { SESSION_ID_RULE, validSessionId } from './session-id.js';
import { readBody, relayResponse, sendJsonText } from './http-io.js';
import { rememberClientBody } from './client-bytes.js';
import { checkedBody, parseAsItArrives } from './sliced-parse.js';
import { reusableOf, toolsCloseOf, type KeptBodies, type ReadBody } from './body-reuse.js';
import { forwardedHeaders, type Upstream } from './upstream.js';
import { settler, settlingUpstream } from './settle-turn.js';
import { answerHeaders, countRecalls, requestLine, summarizerOf } from './request-report.js';

export { OFFLINE_SUMMARIZER } from './request-report.js';
import { usageTap, type UsageTap } from './usage-tap.js';
import { warmCounts } from './warm-counts.js';
import { upstreamCompactClient, upstreamInlineClient, withSummaryContext } from './upstream-summarizer.js';
import { holdsCompaction, REPLAY_BETAS, replayingRequest } from './anthropic-native.js';
import { agentSessionId } from './agent-ids.js';
import { withRecallTool, withRecallToolText } from './recall-tool.js';
import { withTopLevelValueOf } from './json-splice.js';
import { splicedRequest } from './list-splice.js';
import { forwardAnsweringRecalls, sendUpstream, sessionRecaller } from './recall-loop.js';
import {
  answerReserve,
  asClientSent,
  textWithOutputLimit,
  bodyTokens,
  changedResults,
  loweredOutput,
  unchanged,
  withOutputLimit,
} from './answer-room.js';
import type { Receipt } from '../summary/receipt.js';
import { RequestSummaries, type PaidSummaries } from './paid-summaries.js';
import type { SummaryCacheReport } from '../session/index.js';

/** What the compacting handler works with (one per server). */
export interface CompactingContext {
  conversations: ProxyConversations;
  index: SessionIndex;
  metrics: ServeMetrics;
  upstream: Upstream;
  /** The upstream URL for a request path of a protocol. */
  upstreamUrl(protocol: ProtocolName, pathAndQuery: string): string;
  capacity?: number;
  maxBodyBytes: number;
  /** The clearing settings the server was started with (over {@link clearingFor}'s). */
  policy?: Partial<ClearingPolicy>;
  /** What each session's last request did, for the sessions endpoint. */
  lastRequests: Map<string, LastRequest>;
  /** Whether a request's new text is counted ahead of its projection: its session runs its turns in this process. */
  countsAhead?: boolean;
  /** How a request of a protocol and model compacts through its upstream natively, if it can. */
  nativeCompaction(protocol: ProtocolName, model: string): NativeKind | undefined;
  /** Who writes summaries: the request's own upstream, or the embedded offline summarizer. */
  summarizer: 'upstream' | 'offline';
  /** Where one line per notable request goes (operators read it on stderr); none when absent. */
  log?(line: string): void;
  /** Summary answers of requests whose turn was dropped, for their retries. */
  paidSummaries?: PaidSummaries;
  /** Each session's last body, for its next request to be read from where it leaves off. */
  bodies?: KeptBodies;
}

/** The upstream's own compaction: its compact endpoint, or the compact edit inside a request. */
export type NativeKind = 'nativeStandalone' | 'nativeInline';

/** What a session's last request did (shown by `GET /compactor/sessions/:id`). */
export interface LastRequest {
  protocol: ProtocolName;
  model: string;
  tokensBefore: number;
  tokensAfter: number;
  compacted: boolean;
  /** The strategy the request's compaction ran with (`local` after a failed native pass). */
  strategy?: string;
  at: string;
  /** What the session's requests made so far: compactions, provider summary calls, and who wrote them. */
  made: SessionMade;
  /** Kept for the next request, not shown: how many messages this one sent, their tokens, the last one's hash. */
  sent?: SentCount;
}

/** The messages a request sent after its fixed part: how many, their tokens, the last one's hash chain value. */
export interface SentCount {
  messages: number;
  tokens: number;
  lastHash: string | undefined;
}

/** A session's compactions since this proxy started, and the summarizer that really wrote them. */
export interface SessionMade {
  compactions: number;
  summaryCalls: number;
  /** Extra upstream requests the proxy made to answer the model's recall calls. */
  recallTurns?: number;
  /** Who wrote the last compaction: the upstream (natively or a summary, with the model) or offline. */
  summarizer?: string;
  /** The last Local compaction's receipt: what its replaced span had to keep and where each item landed. */
  receipt?: Receipt;
  /** The last summary request: over the last request sent or a bounded fork, and the share of it the upstream's cache served. */
  summaryCache?: SummaryCacheReport;
}

/** Header of an answer whose request asked for more output than the window holds: `ASKED->SENT`. */
export const LOWERED_HEADER = 'x-compactor-max-tokens-lowered';

/** Header naming the session of a request (sent by the client, returned by the proxy). */
export const SESSION_HEADER = 'x-compactor-session';

/**
 * How the proxy clears old tool results unless told otherwise: rarely and a lot at a time.
 * Every clearing step changes the request's prefix, and so costs the provider's prompt cache.
 * With a step size set, each request repeats the one sent before (its cleared results stay
 * cleared) until it reaches the compaction threshold; then one step clears every old result but
 * the newest call's, so many turns fit before the next step.
 */
export function clearingFor(capacity: number): Partial<ClearingPolicy> {
  return {
    enabled: true,
    keepToolUses: 1,
    keepRecentToolBatches: 1,
    clearAtLeast: Math.floor(capacity * 0.75),
  };
}

/** How providers begin the refusal of a request over the window (agents recognise it). */
const TOO_LONG = 'prompt is too long';

/** The message a refusal is answered with: the proxy names itself, after a provider's own wording. */
const refusalText = (message: string) => (message.startsWith(TOO_LONG) ? message : `compactor: ${message}`);

/**
 * Runs `work`; a problem with the request itself (e.g. its system prompt and tools alone do
 * not fit the window) is the client's to fix: a 400 saying what, not a server error.
 */
export async function refusingUserErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    // Worded as the providers word it, so an agent runs its own recovery (its compaction) on it.
    if (WindowTooSmallError.isInstance(e))
      throw new RequestRefusedError(
        400,
        `${TOO_LONG}: ${e.fixedTokens} tokens > ${e.capacityTokens} maximum (compactor: ${e.message})`,
      );
    if (UserError.isInstance(e)) throw new RequestRefusedError(400, e.message);
    throw e;
  }
}

/** Reads a body and turns the failures into answers the client understands. */
export async function readParsed(
  req: IncomingMessage,
  protocol: ProtocolName,
  limit: number,
  countTokens = false,
  bodies?: KeptBodies,
): Promise<{ text: string; bytes: Buffer; parsed: ParsedRequest; read?: ReadBody }> {
  // A large body is parsed as it arrives (or a slice at a time once read), and its depth checked
  // a slice at a time: other clients are served meanwhile.
  const arriving = parseAsItArrives(req, bodies?.startsAsKept(protocol, req.url ?? '/'));
  const bytes = await readBody(req, limit, arriving?.write);
  // A body that resends a session's last one is read from where that one's messages end.
  const read = bodies?.read(protocol, req.url ?? '/', bytes);
  if (read !== undefined) {
    arriving?.end();
    // Its bytes were checked to be UTF-8 when it was read on from the kept body.
    rememberClientBody(req, read.text, bytes, { pieces: read.pieces, aligned: true });
    return { text: read.text, bytes, parsed: read.parsed, read };
  }
  const text = bytes.toString('utf8');
  try {
    const body = await checkedBody(text, bytes, arriving);
    const parsed = parseRequest(protocol, text, countTokens, req.url, body);
    rememberClientBody(req, text, bytes);
    return { text, bytes, parsed };
  } catch (e) {
    if (UserError.isInstance(e)) throw new RequestRefusedError(400, `malformed request: ${e.message}`);
    throw e;
  }
}

/** The session a request belongs to: the client's header, an id the agent already sends, else its history. */
function sessionIdOf(
  req: IncomingMessage,
  parsed: ParsedRequest,
  chain: RequestChain,
  index: SessionIndex,
): string {
  const header = req.headers[SESSION_HEADER];
  const given = (Array.isArray(header) ? header[0] : header)?.trim();
  if (given !== undefined && given !== '') {
    // Refused before anything is sent upstream or stored: the answer could not name it.
    if (validSessionId(given) === undefined)
      throw new RequestRefusedError(400, `${SESSION_HEADER}: ${SESSION_ID_RULE}`);
    return given;
  }
  // An id the agent sends (a header of its own, its body) that the proxy cannot use is ignored:
  // its history finds the session.
  const agent = validSessionId(agentSessionId(req.headers)) ?? validSessionId(parsed.clientSessionId);
  if (agent !== undefined) return index.place(agent, parsed.messages, chain);
  return index.find(parsed.messages, chain);
}

/**
 * A request's hash chain and session; its body is kept for the session's next request. Every
 * message's bytes are hashed once, chained: the session index and the sync point compare these.
 */
function placedRequest(
  ctx: CompactingContext,
  req: IncomingMessage,
  body: { text: string; bytes: Buffer; asSent: ParsedRequest; parsed: ParsedRequest; read?: ReadBody },
): { chain: RequestChain; id: string; toolsClose: () => number } {
  const { text, bytes, asSent, read } = body;
  const reading =
    read ??
    (ctx.bodies !== undefined
      ? reusableOf(asSent.protocol, req.url ?? '/', bytes, text, asSent)
      : { chain: requestChain(text, asSent, bytes), reusable: undefined });
  const { chain } = reading;
  const id = sessionIdOf(req, body.parsed, chain, ctx.index);
  ctx.bodies?.keep(id, reading.reusable);
  return { chain, id, toolsClose: () => toolsCloseOf({ text, reusable: reading.reusable }) };
}

/** Syncs the request into its session and projects it; a summary it needs goes to the request's own upstream and model. */
function projectRequest(
  ctx: CompactingContext,
  req: IncomingMessage,
  parsed: ParsedRequest,
  at: RequestAt,
  signal: AbortSignal,
  summaries: RequestSummaries | undefined,
): Promise<ConversationProjection> {
  const { protocol } = parsed;
  const { id, capacity, reserve, text, chain } = at;
  const native = ctx.nativeCompaction(protocol, parsed.model);
  const summaryContext = {
    protocol,
    model: parsed.model,
    url: ctx.upstreamUrl(protocol, req.url ?? '/'),
    headers: forwardedHeaders(req.headers),
    upstream: ctx.upstream,
    signal,
    maxOutput: reserve,
    window: capacity,
    ...(summaries !== undefined ? { summaries } : {}),
    ...(native === 'nativeStandalone'
      ? { compactUrl: ctx.upstreamUrl(protocol, '/v1/responses/compact') }
      : {}),
  };
  return refusingUserErrors(() =>
    withSummaryContext(summaryContext, () =>
      ctx.conversations.project({
        conversationId: id,
        system: parsed.envelope.system,
        tools: parsed.envelope.tools,
        messages: parsed.messages,
        chain: chain.links,
        model: { id: parsed.model },
        ...(parsed.envelope.wire !== 'gemini' ? { wire: parsed.envelope.wire } : {}),
        signal,
        // Kept only once the upstream accepts the request (see settlingUpstream).
        held: true,
        ...(native === 'nativeStandalone' ? { standalone: upstreamCompactClient() } : {}),
        ...(native === 'nativeInline' ? { inline: upstreamInlineClient() } : {}),
        policy: { ...clearingFor(capacity), ...ctx.policy },
        limits: { reservedOutput: reserve },
        // What the session holds is about its last request: at most two bytes a character in memory.
        // (The bodies kept for next requests have a budget of their own.)
        bytes: 2 * text.length,
      }),
    ),
  );
}

/**
 * The body that goes upstream for a projected request: the client's own bytes when the
 * projection changed nothing, else its text with only the changed items written anew (or the
 * request written again around the projected messages where that cannot be done), with its
 * output limit lowered when the window cannot hold it beside the input.
 */
function outgoing(
  text: string | undefined,
  parsed: ParsedRequest,
  projection: ConversationProjection,
  counts: LastRequest,
  capacity: number,
  chain: RequestChain,
) {
  // A session that holds an Anthropic compaction block sends it as the API accepts it.
  const replay = parsed.protocol === 'anthropic' && holdsCompaction(projection.request);
  const sent = replay ? replayingRequest(projection.request, parsed.meta, capacity) : undefined;
  const request = sent ? { ...parsed, meta: sent.meta } : parsed;
  const messages = asClientSent(sent?.messages ?? projection.request, parsed.messages, chain.links);
  const own = sent === undefined ? text : undefined;
  const inText = (ms: readonly Message[]) =>
    own === undefined ? undefined : unchanged(ms, parsed.messages) ? own : splicedRequest(own, request, ms);
  const spliced = inText(messages);
  const asked = spliced ?? writeRequest(request, messages);
  const input = inputTokens(asked, counts, projection, parsed.maxOutput, capacity);
  const lowered = loweredOutput(capacity, input, parsed.maxOutput);
  /**
   * The body for a list of messages asking for `limit` tokens of answer (the client's own limit
   * when undefined): in the client's text where it can be, else written anew with the tools in
   * the client's own bytes, so the tool list never changes within a session.
   */
  const write = (ms: readonly Message[], limit: number | undefined) => {
    const body = inText(ms);
    // Only the limit changes: the client's bytes keep the prefix the provider cached.
    const inPlace =
      limit !== undefined && body !== undefined ? textWithOutputLimit(body, parsed.protocol, limit) : body;
    if (inPlace !== undefined) return inPlace;
    const made = writeRequest(limit === undefined ? request : withOutputLimit(request, limit), ms);
    return text === undefined ? made : withTopLevelValueOf(made, text, 'tools');
  };
  const body = lowered === undefined && spliced !== undefined ? asked : write(messages, lowered);
  return { body, lowered, replay, cleared: changedResults(messages, parsed.messages), write, messages };
}

/** A request's body, session, window and answer reserve. */
interface RequestAt {
  text: string;
  /** The client's text as it goes upstream when nothing else changes (the recall tool spliced in); undefined when it cannot be spliced. */
  verbatim: string | undefined;
  id: string;
  capacity: number;
  reserve: number;
  /** The request's hash chain (one value per message), shared by the session index and the sync point. */
  chain: RequestChain;
}

/** Projects a request into its session and writes what goes upstream; what is new is counted first, a slice at a time. */
async function projected(
  ctx: CompactingContext,
  req: IncomingMessage,
  parsed: ParsedRequest,
  at: RequestAt,
  signal: AbortSignal,
  held: HeldTurn,
) {
  const { id, capacity } = at;
  const release =
    ctx.countsAhead === true ? await warmCounts(ctx.conversations, id, parsed) : () => undefined;
  try {
    const summaries = ctx.paidSummaries && new RequestSummaries(ctx.paidSummaries);
    const projection = await projectRequest(ctx, req, parsed, at, signal, summaries).catch((e: unknown) => {
      summaries?.settle(false);
      throw e;
    });
    const counts = recordProjection(ctx, id, parsed, projection, at.chain);
    held.settle = settler(ctx, id, at.chain, counts, projection, summaries);
    const sending = settlingUpstream(ctx, held.settle);
    return {
      projection,
      counts,
      sending,
      ...outgoing(at.verbatim, parsed, projection, counts, capacity, at.chain),
    };
  } finally {
    release();
  }
}

/** Reads the provider's own count of what was sent from its answer: it anchors the session's next estimate. */
function providerUsageTap(stream: boolean, projection: ConversationProjection): UsageTap {
  return usageTap(stream, (usage) => {
    if (usage !== undefined) recordProviderUsage(projection, usage.inputTokens, usage.cachedInputTokens);
  });
}

/** Handles one request of a compacting path: sync its session, project, forward, relay the answer. */
export async function handleCompacting(
  ctx: CompactingContext,
  protocol: ProtocolName,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<string> {
  // Until the upstream answers, the request's turn is held; any way out without an answer drops it.
  const held: HeldTurn = { settle: async () => undefined };
  try {
    return await compacting(ctx, protocol, req, res, signal, held);
  } catch (e) {
    if (!RequestRefusedError.isInstance(e)) throw e;
    ctx.log?.(`refused (${e.status}): ${protocol}: ${e.message}`);
    sendJsonText(res, e.status, errorBody(protocol, e.status, refusalText(e.message)));
    return `refused-${e.status}`;
  } finally {
    await held.settle(false);
  }
}

/** What settles a request's turn (see settle-turn.ts). */
interface HeldTurn {
  settle(kept: boolean): Promise<void>;
}

async function compacting(
  ctx: CompactingContext,
  protocol: ProtocolName,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
  held: HeldTurn,
): Promise<string> {
  const started = process.hrtime.bigint();
  const {
    text,
    bytes,
    parsed: asSent,
    read,
  } = await readParsed(req, protocol, ctx.maxBodyBytes, false, ctx.bodies);
  // Every request that carries tools offers the recall tool too, from a session's first request on.
  const recalling = withRecallTool(asSent);
  const parsed = recalling ?? asSent;
  const capacity = ctx.capacity ?? catalogCapacity({ id: parsed.model });
  const skip =
    parsed.passthrough ?? `unknown model "${parsed.model}" and no --capacity: the window is not known`;
  if (parsed.passthrough !== undefined || capacity === undefined) {
    ctx.log?.(`passthrough: ${protocol} ${parsed.model}: ${skip}`);
    await forward(ctx, protocol, req, res, text, signal, { 'x-compactor-passthrough': skip });
    return 'passthrough';
  }
  const { chain, id, toolsClose } = placedRequest(ctx, req, { text, bytes, asSent, parsed, read });
  const reserve = answerReserve(capacity, parsed.maxOutput);
  const clientText = recalling === undefined ? text : withRecallToolText(req, protocol, text, toolsClose());
  const out = await projected(
    ctx,
    req,
    parsed,
    { text, verbatim: clientText, id, capacity, reserve, chain },
    signal,
    held,
  );
  const { projection, counts, body, lowered, replay, cleared, sending } = out;
  ctx.metrics.projectionSeconds.observe({ protocol }, Number(process.hrtime.bigint() - started) / 1e9);
  const tap = providerUsageTap(parsed.stream, projection);
  const headers = answerHeaders(id, counts, projection, lowered, parsed.maxOutput);
  ctx.log?.(requestLine(id, counts, projection, cleared, lowered, parsed.maxOutput));
  const betas = replay ? REPLAY_BETAS : [];
  if (recalling !== undefined) {
    // The rounds fit the window as the first request did.
    const room = { capacity, reserve, estimator: projection.session.estimator };
    const { write, messages } = out;
    const turn = { request: parsed, write, messages, history: parsed.messages, body, betas, room };
    const recall = sessionRecaller(ctx.conversations, projection.conversationId, projection.session, signal);
    const exchange = { ctx: sending, req, res, turn, recall, signal, extra: headers, tap };
    countRecalls(ctx, id, await forwardAnsweringRecalls(exchange));
    return 'projected';
  }
  await forward(sending, protocol, req, res, body, signal, headers, tap, betas);
  return 'projected';
}

/**
 * The input a request's output limit must fit beside: the session's estimate, or, when the
 * limit comes near the window, every string of the body (unmodelled blocks and fields count too).
 */
function inputTokens(
  body: string,
  counts: LastRequest,
  projection: ConversationProjection,
  asked: number | undefined,
  capacity: number,
): number {
  if (asked === undefined || counts.tokensAfter + asked <= capacity / 2) return counts.tokensAfter;
  const { estimator } = projection.session;
  return Math.max(
    counts.tokensAfter,
    bodyTokens(body, (t) => estimator.text(t)),
  );
}

/**
 * Tokens of the messages a request sent. A session's next request resends the last one's
 * messages and adds a few: when the request's hash chain shows the last request's messages
 * are still its beginning (every one of them unchanged), only the new ones are counted.
 */
function sentTokens(
  messages: readonly Message[],
  estimator: Estimator,
  before: SentCount | undefined,
  hashes: readonly string[],
): SentCount {
  const lastHash = hashes.length === messages.length ? hashes[messages.length - 1] : undefined;
  const kept =
    before !== undefined &&
    before.lastHash !== undefined &&
    before.messages <= messages.length &&
    hashes[before.messages - 1] === before.lastHash;
  const from = kept ? before.messages : 0;
  let tokens = kept ? before.tokens : 0;
  for (let i = from; i < messages.length; i++) tokens += estimator.message(messages[i]);
  return { messages: messages.length, tokens, lastHash };
}

/** Counts what a projection did (metrics, the session's last request) and returns its token counts. */
function recordProjection(
  ctx: CompactingContext,
  id: string,
  parsed: ParsedRequest,
  projection: ConversationProjection,
  chain: RequestChain,
): LastRequest {
  const { session } = projection;
  const fixed = session.limits.prefixTokens ?? 0;
  const before = ctx.lastRequests.get(id);
  const made = before?.made ?? { compactions: 0, summaryCalls: 0 };
  const sent = sentTokens(parsed.messages, session.estimator, before?.sent, chain.links);
  const last: LastRequest = {
    protocol: parsed.protocol,
    model: parsed.model,
    tokensBefore: fixed + sent.tokens,
    tokensAfter: fixed + session.estimator.history(projection.request),
    compacted: projection.decision === 'compacted',
    ...(projection.strategy !== null ? { strategy: projection.strategy } : {}),
    at: new Date().toISOString(),
    sent,
    made:
      projection.decision === 'compacted'
        ? {
            ...made,
            compactions: made.compactions + 1,
            summaryCalls: made.summaryCalls + projection.summaryCalls,
            summarizer: summarizerOf(ctx, parsed, projection),
            ...(projection.compaction?.receipt ? { receipt: projection.compaction.receipt } : {}),
            ...(projection.summaryCache ? { summaryCache: projection.summaryCache } : {}),
          }
        : made,
  };
  const labels = { protocol: parsed.protocol };
  // The sessions endpoint learns it once the upstream accepted the request (see settler).
  ctx.metrics.tokensBefore.inc(labels, last.tokensBefore);
  ctx.metrics.tokensAfter.inc(labels, last.tokensAfter);
  if (projection.decision === 'compacted') ctx.metrics.compactions.inc(labels);
  if (projection.summaryCalls > 0) ctx.metrics.summaryCalls.inc(labels, projection.summaryCalls);
  return last;
}

/** Sends a body upstream with the client's headers and relays the answer with `extra` headers. */
export async function forward(
  ctx: CompactingContext,
  protocol: ProtocolName,
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  signal: AbortSignal,
  extra: Record<string, string>,
  tap?: UsageTap,
  betas: readonly string[] = [],
): Promise<void> {
  const upstream = await sendUpstream(ctx, protocol, req, body, betas, signal);
  // Only a successful answer's usage describes the request that was sent.
  await relayResponse(res, upstream, extra, upstream.status === 200 ? tap : undefined);
}
