import type { ConversationProjection } from '../adapters/shared/conversations.js';
import type { CompactingContext, LastRequest } from './compacting.js';
import type { RequestChain } from './hash-chain.js';
import type { RequestSummaries } from './paid-summaries.js';

/**
 * A request's turn is held while it goes upstream: kept once the upstream accepted the
 * request, dropped when it did not (any other status, a timeout, a reset, the client's abort
 * before the answer), so a failed request leaves its session exactly as it was.
 */

/**
 * Settles a request's turn once (later calls do nothing): kept, the session index and the
 * sessions endpoint learn the request; dropped, the session is as it was before it.
 */
export function settler(
  ctx: CompactingContext,
  id: string,
  chain: RequestChain,
  counts: LastRequest,
  projection: ConversationProjection,
  summaries: RequestSummaries | undefined,
): (kept: boolean) => Promise<void> {
  let done: Promise<void> | undefined;
  return (kept) => {
    if (done !== undefined) return done;
    summaries?.settle(kept);
    if (kept) {
      ctx.index.update(id, chain);
      ctx.lastRequests.set(id, counts);
    }
    done = (projection.settle?.(kept) ?? Promise.resolve()).catch((e: unknown) => {
      ctx.log?.(`session ${id}: the turn could not be stored: ${e instanceof Error ? e.message : String(e)}`);
    });
    return done;
  };
}

/**
 * The upstream as a request's answer goes through it: the first answer settles the request's
 * turn, kept only when the upstream accepted the request (a 2xx status); a failed send drops it.
 */
export function settlingUpstream(
  ctx: CompactingContext,
  settle: (kept: boolean) => Promise<void>,
): CompactingContext {
  const { upstream } = ctx;
  const settling = async <A extends { status: number }>(sending: Promise<A>): Promise<A> => {
    let answer;
    try {
      answer = await sending;
    } catch (e) {
      await settle(false);
      throw e;
    }
    // The client hears the answer once the turn it completes is stored, as before the answer.
    await settle(answer.status >= 200 && answer.status < 300);
    return answer;
  };
  return {
    ...ctx,
    upstream: {
      send: (url, init, signal) => settling(upstream.send(url, init, signal)),
      sendWhole: (url, init, signal) => settling(upstream.sendWhole(url, init, signal)),
      close: () => upstream.close(),
    },
  };
}
