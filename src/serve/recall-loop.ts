import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable, type Transform } from 'node:stream';
import { text as textOf } from 'node:stream/consumers';
import { msg, type Message } from '../messages/message.js';
import type { CompactorSession } from '../session/index.js';
import { answerRecall } from '../projection/index.js';
import { relayResponse } from './http-io.js';
import type { CompactingContext } from './compacting.js';
import type { ParsedRequest, ProtocolName } from './protocols.js';
import { recallTurnOf } from './recall-tool.js';
import { answerOfStream } from './recall-stream.js';
import { StreamPeek, type StreamVerdict } from './recall-peek.js';
import { forwardedHeaders, type UpstreamResponse } from './upstream.js';
import { withBetas } from './anthropic-native.js';
import { fitRecallRound, recallRoundBody, type RecallRoom } from './recall-room.js';

/** The most recall rounds one client request may take before the model's answer goes back as it is. */
export const MAX_RECALL_ROUNDS = 3;

/** Header of an answer that took recall rounds: how many extra upstream requests they cost. */
export const RECALLS_HEADER = 'x-compactor-recalls';

/** What the first upstream request of a turn is made of. */
export interface RecallTurn {
  /** The request as written upstream (recall tool added, output limit as sent). */
  request: ParsedRequest;
  /** The messages it carries after the fixed part. */
  messages: readonly Message[];
  /** The conversation as the client sent it (originals of whatever was cleared). */
  history: readonly Message[];
  body: string;
  betas: readonly string[];
  /** The window each round must fit. */
  room: RecallRoom;
}

/** Sends one body upstream with the client's headers, counting an error answer in the metrics. */
export async function sendUpstream(
  ctx: CompactingContext,
  protocol: ProtocolName,
  req: IncomingMessage,
  body: string,
  betas: readonly string[],
  signal: AbortSignal,
): Promise<UpstreamResponse> {
  const headers = withBetas(forwardedHeaders(req.headers), betas);
  headers['content-type'] = 'application/json';
  const answer = await ctx.upstream.send(
    ctx.upstreamUrl(protocol, req.url ?? '/'),
    { method: 'POST', headers, body },
    signal,
  );
  if (answer.status >= 400) ctx.metrics.upstreamErrors.inc({ protocol, status: String(answer.status) });
  return answer;
}

/**
 * The recall results for every call of an assistant turn: from the client's own messages (an
 * agent sends its whole conversation), else from the session (what it stored before).
 */
function answers(
  session: CompactorSession,
  history: readonly Message[],
  turn: readonly Message[],
  sent: readonly Message[],
): Message[] {
  const out: Message[] = [];
  for (const m of turn)
    for (const call of m.toolCalls ?? []) {
      const request = [...sent, ...out];
      const own = answerRecall(history, call.arguments, request);
      const text = own.found ? own.text : session.recall(call.arguments, request);
      out.push(msg.tool(call.id, text, call.name));
    }
  return out;
}

/**
 * Forwards a request whose upstream may call the recall tool: while the answer
 * holds only recall calls (at most {@link MAX_RECALL_ROUNDS} times), the proxy appends the calls
 * and the originals they ask for and asks again; the client gets the last answer, with no
 * recall call in it unless the rounds ran out. A streamed answer passes on as it comes once its
 * first events show text or another tool's call; one that opens with a recall call is held to
 * its end. Resolves to the number of rounds taken.
 */
export async function forwardAnsweringRecalls(
  ctx: CompactingContext,
  req: IncomingMessage,
  res: ServerResponse,
  turn: RecallTurn,
  session: CompactorSession,
  signal: AbortSignal,
  extra: Record<string, string>,
  tap?: Transform,
): Promise<number> {
  const { protocol } = turn.request;
  let messages: readonly Message[] = turn.messages;
  // The answers of this turn's rounds so far: they give way to later ones when the window is full.
  const earlier = new Set<Message>();
  let answer = await sendUpstream(ctx, protocol, req, turn.body, turn.betas, signal);
  for (let round = 0; ; round++) {
    if (answer.status !== 200 || round === MAX_RECALL_ROUNDS) return relay(res, answer, round, extra, tap);
    if (turn.request.stream) {
      const peeked = await peek(protocol, answer);
      // Not a recall turn: the stream goes on to the client as it comes.
      if (peeked.verdict === 'other') return relay(res, peeked.answer, round, extra, tap);
      answer = peeked.answer;
    }
    // Read through the stream, whatever it is now (the peeked part comes again first).
    const text = await textOf(answer.body);
    const json = turn.request.stream ? answerOfStream(protocol, text) : text;
    const called = json === undefined ? undefined : recallTurnOf(protocol, json);
    const buffered = { ...answer, body: Readable.from([Buffer.from(text)]) as UpstreamResponse['body'] };
    if (called === undefined) return relay(res, buffered, round, extra, tap);
    const given = answers(session, turn.history, called, messages);
    messages = fitRecallRound(turn.room, turn.request, messages, called, given, earlier, turn.history);
    for (const m of messages.slice(messages.length - given.length)) earlier.add(m);
    const body = recallRoundBody(turn.room, turn.request, messages, turn.body);
    answer = await sendUpstream(ctx, protocol, req, body, turn.betas, signal);
  }
}

/** Relays the final answer with the count of recall rounds it took. */
async function relay(
  res: ServerResponse,
  answer: UpstreamResponse,
  rounds: number,
  extra: Record<string, string>,
  tap: Transform | undefined,
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

/**
 * Reads a streamed answer until its first events tell whether it can be a recall turn (or it
 * ends); the answer returned carries the whole stream again, the read part first.
 */
async function peek(
  protocol: ProtocolName,
  answer: UpstreamResponse,
): Promise<{ verdict: StreamVerdict; answer: UpstreamResponse }> {
  const source = answer.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const seen = new StreamPeek(protocol);
  const read: Buffer[] = [];
  for (;;) {
    const next = await source.next();
    if (next.done === true) break;
    read.push(next.value);
    if (seen.push(next.value) !== undefined) break;
  }
  async function* again(): AsyncGenerator<Buffer> {
    try {
      yield* read;
      for (let next = await source.next(); next.done !== true; next = await source.next()) yield next.value;
    } finally {
      // A client gone early leaves nothing open upstream.
      await source.return?.();
    }
  }
  const body = Readable.from(again()) as UpstreamResponse['body'];
  return { verdict: seen.verdict, answer: { ...answer, body } };
}
