import { randomUUID } from 'node:crypto';
import { answerRecall } from '../projection/index.js';
import { z } from 'zod';
import {
  catalogCapacity,
  conversationIdOf,
  deprecatedNames,
  type ConversationCall,
  type ConversationOptions,
} from '../adapters/shared/conversations.js';
import type { KeptConversation, ProxyConversations } from './kept-conversation.js';
import { branchName, hashOf } from '../adapters/shared/sync-point.js';
import { MessageSchema } from '../messages/message.js';
import { CancelledError, RequestRefusedError } from '../core/errors.js';
import {
  ATTEMPT_HEADER,
  conversationName,
  ConversationTurnResultSchema,
  type ConversationTurnCall,
} from '../restate/conversation-object.js';
import { oneLine } from '../restate/restate-store.js';
import { OBJECT_NAME } from '../restate/session-object.js';
import { providerUsage, type ProviderUsage } from '../restate/provider-usage.js';
import {
  createCompactorSession,
  SummaryCacheReportSchema,
  type CompactorSession,
  type CompactorSessionOptions,
} from '../session/index.js';

/**
 * The proxy's sessions when they live on Restate: each request is one call of its
 * conversation's `compactorSessionConversation` object over the ingress, which syncs the new
 * messages into the session object of the current branch and runs the turn there, on a worker
 * (its summary a recorded step, written by the worker's route). Nothing of a session is kept
 * in the proxy, so any number of proxies serve any session, and Restate runs one request of a
 * conversation at a time: a second one waits instead of being refused.
 *
 * The call carries an idempotency key made from the request: the client's retry of a request
 * whose proxy died, through any proxy, attaches to the call already running (or reads its
 * answer) instead of syncing or summarizing again. No header the client sent goes to Restate.
 */
export function restateConversations(
  ingress: string,
  options: CompactorSessionOptions & ConversationOptions,
): ProxyConversations {
  // The proxy holds no session's history here, so there is no memory budget to keep.
  const { maxConversations = 1_000, maxBytes: _maxBytes, onEvict, ...shared } = options;
  const base = `${ingress.replace(/\/+$/, '')}/${conversationName(OBJECT_NAME)}`;
  const counters = tokenCounters(shared, maxConversations, onEvict);
  const urlOf = (id: string) => `${base}/${encodeURIComponent(id)}`;
  return {
    async project(call) {
      const id = conversationIdOf(call.messages, call.conversationId, call.system);
      const capacity = shared.limits?.capacity ?? catalogCapacity(call.model);
      const input = turnInput(call, shared, capacity);
      const { turn, settle } = await turnCall(urlOf(id), input, call, ingress);
      const session = counters.of(id, input.limits ?? {});
      session.setEnvelope(input.envelope);
      const sessionUrl = `${ingress.replace(/\/+$/, '')}/${OBJECT_NAME}/${encodeURIComponent(branchName(id, turn.branch))}`;
      const { request, decision, summaryCalls, strategy, summaryCache = null } = turn;
      // The compaction pass ran on a worker: its report stays there, but for its summaries' cached share.
      return {
        ...{ conversationId: id, request, decision, summaryCalls, strategy },
        ...{ compaction: null, summaryCache, session },
        ...(settle !== undefined ? { settle } : {}),
        // The session object anchors its next requests on the provider's count, as a local session does.
        onUsage: (usage) => void sendUsage(`${sessionUrl}/recordUsage/send`, providerUsage(request, usage)),
        ...deprecatedNames(request, decision),
      };
    },
    // The session itself lives on Restate (its object's `state` handler shows it); recall calls
    // are answered there (`recallKept`).
    session: () => undefined,
    recall: (args) => answerRecall([], args).text,
    recallKept: (id, args, signal) => callRecall(`${urlOf(id)}/recall`, args, ingress, signal),
    syncedHashes: () => undefined,
    async delete(id) {
      counters.drop(id);
    },
    branches: () => [],
    close: () => counters.close(),
    async kept(id, signal) {
      const point = KeptSyncSchema.nullable().safeParse(
        await callHandler(`${urlOf(id)}/state`, ingress, signal),
      );
      if (!point.success) throw notAnAnswer(ingress, 'sync point');
      if (point.data === null) return undefined;
      const key = encodeURIComponent(branchName(id, point.data.branch));
      const url = `${ingress.replace(/\/+$/, '')}/${OBJECT_NAME}/${key}/state`;
      const state = KeptStateSchema.safeParse(await callHandler(url, ingress, signal));
      if (!state.success) throw notAnAnswer(ingress, 'session state');
      const session = counters.peek(id);
      return {
        branches: point.data.branch + 1,
        history: state.data.history,
        compactions: state.data.boundaries.length,
        summaryCache: state.data.summaryCache ?? null,
        ...(session !== undefined ? { session } : {}),
      } satisfies KeptConversation;
    },
  };
}

/** The parts of the conversation object's sync point and the session object's `state` a reader uses. */
const KeptSyncSchema = z.looseObject({ branch: z.number().int().nonnegative() });
const KeptStateSchema = z.looseObject({
  history: z.array(MessageSchema),
  boundaries: z.array(z.unknown()),
  summaryCache: SummaryCacheReportSchema.nullable().optional(),
});
const RecallAnswerSchema = z.strictObject({ text: z.string(), found: z.boolean() });

const notAnAnswer = (ingress: string, what: string) =>
  new RequestRefusedError(502, `the Restate server at ${ingress} answered something else than a ${what}`);

/** What a request hands its conversation object: every message, and the request's envelope, limits and clearing. */
function turnInput(
  call: ConversationCall,
  shared: CompactorSessionOptions,
  capacity: number | undefined,
): ConversationTurnCall {
  // Named by its wire, so a worker whose route speaks it with the same model reuses the
  // request's system prompt, tools and the last request sent (the provider's cache holds them).
  const to = call.wire !== undefined ? { wire: call.wire } : { provider: 'framework' };
  const envelope =
    call.system !== undefined || (call.tools?.length ?? 0) > 0
      ? { ...to, model: call.model?.id ?? 'unknown', system: call.system, tools: call.tools }
      : undefined;
  const policy = { ...shared.policy, ...call.policy };
  return {
    messages: [...call.messages],
    ...(envelope !== undefined ? { envelope } : {}),
    limits: { ...shared.limits, ...call.limits, ...(capacity !== undefined ? { capacity } : {}) },
    ...(Object.keys(policy).length > 0 ? { policy } : {}),
  };
}

/**
 * A session per conversation that only counts tokens for the proxy (window, fixed part,
 * the provider's reported usage): it holds no history. The least recently used go beyond `max`.
 */
function tokenCounters(
  shared: CompactorSessionOptions,
  max: number,
  onEvict: ((id: string) => void) | undefined,
) {
  const counters = new Map<string, CompactorSession>();
  return {
    of(id: string, limits: NonNullable<CompactorSessionOptions['limits']>): CompactorSession {
      const session = counters.get(id) ?? createCompactorSession({ ...shared, limits });
      counters.delete(id);
      counters.set(id, session);
      for (const old of counters.keys()) {
        if (counters.size <= max) break;
        counters.get(old)!.close();
        counters.delete(old);
        onEvict?.(old);
      }
      return session;
    },
    /** The counting session of a conversation, if any, left where it is in the order. */
    peek: (id: string) => counters.get(id),
    drop(id: string) {
      counters.get(id)?.close();
      counters.delete(id);
    },
    close() {
      for (const s of counters.values()) s.close();
      counters.clear();
    },
  };
}

/** How the session words a request whose fixed part alone is over the window (window, fixed part). */
const WINDOW_TOO_SMALL =
  /context window of ([\d,]+) tokens cannot hold even the fixed part of a request \(([\d,]+) tokens/;

/** One handler call over the ingress; its answer's status and text. */
async function post(
  url: string,
  body: unknown,
  ingress: string,
  signal: AbortSignal | undefined,
  headers: Record<string, string> = {},
): Promise<{ res: Response; text: string }> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      ...(signal !== undefined ? { signal } : {}),
    });
    return { res, text: await res.text() };
  } catch (e) {
    if (signal?.aborted) throw new CancelledError('the request was cancelled while it waited for Restate');
    const cause = (e as { cause?: { code?: string } } | undefined)?.cause?.code;
    throw new RequestRefusedError(
      502,
      `the Restate server at ${ingress} did not answer (${cause ?? (e as Error).message})`,
    );
  }
}

/** A call of a reading handler (no input); its JSON answer. */
async function callHandler(url: string, ingress: string, signal: AbortSignal | undefined): Promise<unknown> {
  const { res, text } = await post(url, undefined, ingress, signal);
  if (!res.ok)
    throw new RequestRefusedError(502, `the Restate server at ${ingress} refused: ${oneLine(text)}`);
  return safeJson(text);
}

/** One `recall` call of a conversation object (the recall tool's arguments); its answer checked. */
async function callRecall(url: string, args: unknown, ingress: string, signal: AbortSignal | undefined) {
  const { res, text } = await post(url, args, ingress, signal);
  if (!res.ok)
    throw new RequestRefusedError(502, `the Restate server at ${ingress} refused: ${oneLine(text)}`);
  const answer = RecallAnswerSchema.safeParse(safeJson(text));
  if (!answer.success) throw notAnAnswer(ingress, 'recall answer');
  return answer.data;
}

/**
 * One `turn` call over the ingress, keyed by the request (held as `hold` when given) and named
 * by `attempt`; its answer checked.
 */
async function callTurn(
  url: string,
  input: ConversationTurnCall,
  hold: string | undefined,
  attempt: string,
  ingress: string,
  signal?: AbortSignal,
) {
  const key = hold ?? hashOf(input);
  const body = hold !== undefined ? { ...input, hold } : input;
  const headers = { 'idempotency-key': key, [ATTEMPT_HEADER]: attempt };
  const { res, text } = await post(url, body, ingress, signal, headers);
  if (!res.ok) {
    const message = oneLine(text);
    // The request itself is wrong (its fixed part alone over the window): the client's to fix,
    // worded as the providers word it so an agent runs its own recovery on it.
    const tooLong = WINDOW_TOO_SMALL.exec(message);
    if (res.status === 400 && tooLong)
      throw new RequestRefusedError(
        400,
        `prompt is too long: ${tooLong[2]!.replaceAll(',', '')} tokens > ${tooLong[1]!.replaceAll(',', '')} maximum (compactor: ${message})`,
      );
    const why = `the Restate session refused the request: ${message}`;
    throw new RequestRefusedError(res.status === 400 ? 400 : 502, why);
  }
  const parsed = ConversationTurnResultSchema.safeParse(safeJson(text));
  if (!parsed.success) throw notAnAnswer(ingress, 'turn');
  return parsed.data;
}

/**
 * A request's `turn` call. A held one is named by its request and settled once the upstream
 * answered (see settle-turn.ts), by a one-way call: Restate has it in its log once it accepted
 * it, and runs it on the conversation before any later call there, so the answer need not wait
 * for it. Most turns are written at once (`written`): then only a failed request settles. A
 * compacting one is kept aside until its success says so (its archive writes wait till then),
 * and so is one read back for a call sent again (another attempt's answer, for the same key),
 * which may have been dropped since.
 */
async function turnCall(url: string, input: ConversationTurnCall, call: ConversationCall, ingress: string) {
  const hold = call.held === true ? hashOf(input) : undefined;
  const attempt = randomUUID();
  let fresh = false;
  const settle =
    hold === undefined
      ? undefined
      : once((keep) =>
          keep && fresh ? Promise.resolve() : sendSettle(`${url}/settle`, { turn: hold, keep }, ingress),
        );
  const turn = await callTurn(`${url}/turn`, input, hold, attempt, ingress, call.signal).catch(
    async (e: unknown) => {
      await settle?.(false).catch(() => undefined);
      throw e;
    },
  );
  fresh = turn.attempt === attempt && turn.written === true;
  return { turn, settle };
}

/**
 * Sends one `settle` call of a conversation object (keeps or drops the turn it held); resolves
 * once Restate accepted it. Keyed by turn and verdict, so sending it again changes nothing.
 */
async function sendSettle(url: string, body: { turn: string; keep: boolean }, ingress: string) {
  const headers = { 'idempotency-key': `settle:${body.turn}:${body.keep}` };
  const { res, text } = await post(`${url}/send`, body, ingress, undefined, headers);
  if (!res.ok)
    throw new RequestRefusedError(502, `the Restate server at ${ingress} refused: ${oneLine(text)}`);
}

/** `fn` called once; later calls get the first call's promise. */
function once(fn: (kept: boolean) => Promise<void>): (kept: boolean) => Promise<void> {
  let done: Promise<void> | undefined;
  return (kept) => (done ??= fn(kept));
}

/**
 * Hands the provider's usage to the session object without waiting for it (the client's answer
 * is on its way already); a usage that does not arrive leaves the object's estimate as it was.
 */
async function sendUsage(url: string, usage: ProviderUsage | undefined): Promise<void> {
  if (usage === undefined) return;
  await post(url, usage, url, undefined).catch(() => undefined);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
