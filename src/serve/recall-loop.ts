import type { IncomingMessage, ServerResponse } from 'node:http';
import { msg, type Message } from '../messages/message.js';
import type { CompactorSession } from '../session/index.js';
import { alreadyHeld, answerRecall, parseRecallArgs, RECALL_ID_PATTERN } from '../projection/index.js';
import type { ProxyConversations } from './kept-conversation.js';
import { RequestRefusedError } from '../core/errors.js';
import { relayResponse, relayWhole } from './http-io.js';
import type { UsageTap } from './usage-tap.js';
import type { CompactingContext } from './compacting.js';
import type { ParsedRequest, ProtocolName } from './protocols.js';
import { recallTurnOf } from './recall-tool.js';
import { answerOfStream } from './recall-stream.js';
import { newPlace } from './recall-events.js';
import { passAnswer, writeFrames, type Frame } from './recall-relay.js';
import { forwardedHeaders, type Upstream, type UpstreamResponse } from './upstream.js';
import { upstreamBytes } from './client-bytes.js';
import { withBetas } from './anthropic-native.js';
import { fitRecallRound, recallRoundBody, type RecallRoom } from './recall-room.js';

/** The most recall rounds one client request may take before the model's answer goes back as it is. */
export const MAX_RECALL_ROUNDS = 3;

/** Header of an answer that took recall rounds: how many extra upstream requests they cost. */
const RECALLS_HEADER = 'x-compactor-recalls';

/** What the first upstream request of a turn is made of. */
export interface RecallTurn {
  /** The request as the client sent it, with the recall tool added. */
  request: ParsedRequest;
  /**
   * Writes the body for a list of messages after the fixed part, as the first one was written,
   * asking for `outputLimit` tokens of answer (the client's own limit when undefined).
   */
  write(messages: readonly Message[], outputLimit: number | undefined): string;
  /** The messages it carries after the fixed part. */
  messages: readonly Message[];
  /** The conversation as the client sent it (originals of whatever was cleared). */
  history: readonly Message[];
  body: string;
  betas: readonly string[];
  /** The window every round must fit, as the first request did. */
  room: RecallRoom;
}

/** One client request whose answers may call the recall tool, and where its answer goes. */
export interface RecallExchange {
  ctx: CompactingContext;
  req: IncomingMessage;
  res: ServerResponse;
  turn: RecallTurn;
  recall: Recaller;
  signal: AbortSignal;
  /** Headers the client's answer gets besides the upstream's. */
  extra: Record<string, string>;
  /** Reads the provider's usage from the first answer (a later round's describes a longer request). */
  tap?: UsageTap | undefined;
}

/** How an answer is read: as it arrives (`send`), or whole before it goes on (`sendWhole`). */
type Reading = 'send' | 'sendWhole';

/** Sends one body upstream with the client's headers, counting an error answer in the metrics. */
export async function sendUpstream<K extends Reading = 'send'>(
  ctx: CompactingContext,
  protocol: ProtocolName,
  req: IncomingMessage,
  body: string,
  betas: readonly string[],
  signal: AbortSignal,
  how: K = 'send' as K,
): Promise<Awaited<ReturnType<Upstream[K]>>> {
  const headers = withBetas(forwardedHeaders(req.headers), betas);
  headers['content-type'] = 'application/json';
  const answer = (await ctx.upstream[how](
    ctx.upstreamUrl(protocol, req.url ?? '/'),
    // What is still the client's text goes as the client's bytes, not encoded again.
    { method: 'POST', headers, body: upstreamBytes(req, body) },
    signal,
  )) as Awaited<ReturnType<Upstream[K]>>;
  if (answer.status >= 400) ctx.metrics.upstreamErrors.inc({ protocol, status: String(answer.status) });
  return answer;
}

/** Answers a recall call the client's messages do not hold, pointing at a copy `request` already has. */
export type Recaller = (args: unknown, request: readonly Message[]) => Promise<string>;

/**
 * The session's answer to recall calls: from the session in this process, or, for a session
 * kept elsewhere (on Restate), from everything kept there.
 */
export function sessionRecaller(
  conversations: ProxyConversations,
  id: string,
  session: CompactorSession,
  signal: AbortSignal,
): Recaller {
  const kept = conversations.recallKept?.bind(conversations);
  if (kept === undefined) return async (args, request) => session.recall(args, request);
  return async (args, request) => {
    // A store that cannot answer costs the model this one answer, not the client its request.
    const answer = await kept(id, args, signal).catch((e: unknown) => {
      if (!RequestRefusedError.isInstance(e)) throw e;
      return { text: `recall: ${e.message}`, found: false };
    });
    const parsed = parseRecallArgs(args);
    if (!answer.found || typeof parsed === 'string' || !RECALL_ID_PATTERN.test(parsed.id)) return answer.text;
    return (alreadyHeld(request, parsed.id, [answer.text]) ?? answer).text;
  };
}

/**
 * The recall results for every call of an assistant turn: from the client's own messages (an
 * agent sends its whole conversation), else from the session (what it stored before).
 */
async function answers(
  recall: Recaller,
  history: readonly Message[],
  turn: readonly Message[],
  sent: readonly Message[],
): Promise<Message[]> {
  const out: Message[] = [];
  for (const m of turn)
    for (const call of m.toolCalls ?? []) {
      const request = [...sent, ...out];
      const own = answerRecall(history, call.arguments, request);
      const text = own.found ? own.text : await recall(call.arguments, request);
      out.push(msg.tool(call.id, text, call.name));
    }
  return out;
}

/**
 * The messages and body of the next round: the model's recall calls and their answers after
 * what was sent, fitted to the window. `earlier` collects the answers of this turn's rounds (they
 * give way to later ones when the window is full).
 */
async function nextRound(
  turn: RecallTurn,
  recall: Recaller,
  sent: readonly Message[],
  called: readonly Message[],
  earlier: Set<Message>,
): Promise<{ messages: readonly Message[]; body: string }> {
  const given = await answers(recall, turn.history, called, sent);
  const messages = fitRecallRound(turn.room, turn.request, sent, called, given, earlier, turn.history);
  for (const m of messages.slice(messages.length - given.length)) earlier.add(m);
  return { messages, body: recallRoundBody(turn.room, turn.request, messages, turn.write) };
}

/**
 * Forwards a request whose upstream may call the recall tool: while the answer's only tool
 * calls are recall calls (at most {@link MAX_RECALL_ROUNDS} times), the proxy appends the calls
 * and the originals they ask for and asks again; the client gets the last answer, with no
 * recall call in it unless the rounds ran out. Resolves to the number of rounds taken.
 */
export async function forwardAnsweringRecalls(exchange: RecallExchange): Promise<number> {
  if (exchange.turn.request.stream) return streamAnsweringRecalls(exchange);
  const { ctx, req, res, turn, recall, signal, extra, tap } = exchange;
  const { protocol } = turn.request;
  let messages = turn.messages;
  const earlier = new Set<Message>();
  // Read whole: a recall call is answered before anything goes to the client.
  let answer = await sendUpstream(ctx, protocol, req, turn.body, turn.betas, signal, 'sendWhole');
  for (let round = 0; ; round++) {
    const bytes = await answer.body;
    const last = answer.status !== 200 || round === MAX_RECALL_ROUNDS;
    const called = last ? undefined : recallTurnOf(protocol, bytes.toString('utf8'));
    if (called === undefined) {
      const headers = { ...answer.headers, ...extra, [RECALLS_HEADER]: String(round) };
      // The usage of a later round describes a longer request than the session projected.
      const reading = answer.status === 200 && round === 0 ? tap : undefined;
      await relayWhole(res, answer.status, headers, bytes, reading);
      return round;
    }
    const next = await nextRound(turn, recall, messages, called, earlier);
    messages = next.messages;
    answer = await sendUpstream(ctx, protocol, req, next.body, turn.betas, signal, 'sendWhole');
  }
}

/**
 * The same for a streamed answer, which reaches the client event by event: its events go on as
 * they come until one opens a recall call; from there the answer is held to its end. When the
 * turn's only calls were recall calls, the proxy answers them and the next answer goes on in
 * the same stream (renumbered to follow what the client has), so the client reads one answer:
 * the model's text before the recall, then what it wrote after it. Otherwise the held events
 * go to the client as they came.
 */
async function streamAnsweringRecalls(exchange: RecallExchange): Promise<number> {
  const { ctx, req, res, turn, recall, signal, extra, tap } = exchange;
  const { protocol } = turn.request;
  const at = newPlace();
  let messages = turn.messages;
  const earlier = new Set<Message>();
  let body = turn.body;
  let before: { frames: Frame[]; later: boolean } = { frames: [], later: false };
  for (let round = 0; ; round++) {
    const answer = await sendUpstream(ctx, protocol, req, body, turn.betas, signal);
    if (answer.status !== 200) {
      if (!res.headersSent) return relay(res, answer, round, extra, undefined);
      // The stream has begun: the recall call the proxy could not answer goes to the client.
      await answer.body.dump();
      await writeFrames(res, protocol, before.frames, at, before.later);
      return end(res, round);
    }
    const open = () => {
      if (!res.headersSent) writeHead(res, answer, { ...extra, [RECALLS_HEADER]: String(round) });
    };
    // An answer after a recall round goes on in the client's stream once that has begun.
    const later = at.begun;
    const hold = round < MAX_RECALL_ROUNDS;
    const passed = await passAnswer(res, protocol, answer, {
      at,
      later,
      hold,
      open,
      ...(round === 0 ? { tap } : {}),
    });
    const json = passed.held.length > 0 ? answerOfStream(protocol, passed.text) : undefined;
    const called = json === undefined ? undefined : recallTurnOf(protocol, json);
    if (called === undefined) {
      open();
      await writeFrames(res, protocol, passed.held, at, later);
      return end(res, round);
    }
    ({ messages, body } = await nextRound(turn, recall, messages, called, earlier));
    before = { frames: passed.held, later };
    at.offset = at.count;
  }
}

/**
 * Sets the head of a streamed answer. It is opened only to write an event or to end the answer,
 * so it goes out with that write: one write to the client's socket, not one for the head alone.
 */
function writeHead(res: ServerResponse, answer: UpstreamResponse, extra: Record<string, string>): void {
  const headers = { ...answer.headers };
  delete headers['content-length'];
  res.writeHead(answer.status, { ...headers, ...extra });
}

/** Ends a streamed answer once the client has it all. */
async function end(res: ServerResponse, rounds: number): Promise<number> {
  if (!res.destroyed)
    await new Promise<void>((resolve) => {
      // A client gone meanwhile closes the answer without finishing it.
      res.once('close', resolve);
      res.end(resolve);
    });
  return rounds;
}

/** Relays the final answer with the count of recall rounds it took. */
async function relay(
  res: ServerResponse,
  answer: UpstreamResponse,
  rounds: number,
  extra: Record<string, string>,
  tap: UsageTap | undefined,
): Promise<number> {
  const headers = { ...answer.headers };
  // A buffered body is sent whole; its length is what it is now.
  delete headers['content-length'];
  await relayResponse(
    res,
    { ...answer, headers },
    { ...extra, [RECALLS_HEADER]: String(rounds) },
    // The usage of a later round describes a longer request than the session projected.
    answer.status === 200 && rounds === 0 ? tap : undefined,
  );
  return rounds;
}
