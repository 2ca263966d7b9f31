import type { ConversationProjection } from '../adapters/shared/conversations.js';
import type { CompactingContext, LastRequest } from './compacting.js';
import { SESSION_HEADER, LOWERED_HEADER } from './compacting.js';
import type { ParsedRequest } from './protocols.js';

/** What a projected request tells: its answer's headers, the operator's line, who wrote its summary. */

/** The operator's line for a projected request: its session, tokens before and after, and what was done. */
export function requestLine(
  id: string,
  counts: LastRequest,
  projection: ConversationProjection,
  cleared: number,
  lowered: number | undefined,
  asked: number | undefined,
): string {
  const done = [
    projection.decision === 'compacted'
      ? `compacted (${counts.strategy ?? 'local'}, ${projection.summaryCalls} summary call(s))`
      : undefined,
    cleared > 0 ? `${cleared} tool result(s) cleared or shortened` : undefined,
    lowered !== undefined ? `max output lowered ${asked}->${lowered}` : undefined,
  ].filter((s) => s !== undefined);
  const what = done.length > 0 ? done.join(', ') : 'sent as it came';
  return `session ${id}: ${counts.model}: ${counts.tokensBefore} -> ${counts.tokensAfter} tokens; ${what}`;
}

export const OFFLINE_SUMMARIZER = 'offline (the embedded summarizer)';

/** Who wrote a compaction: the embedded summarizer, or the request's upstream and model (and how). */
export function summarizerOf(
  ctx: CompactingContext,
  parsed: ParsedRequest,
  projection: ConversationProjection,
): string {
  if (ctx.summarizer === 'offline') return OFFLINE_SUMMARIZER;
  const how =
    projection.strategy === 'nativeStandalone'
      ? "the upstream's /responses/compact"
      : projection.strategy === 'nativeInline'
        ? "the upstream's compact edit"
        : 'a summary through the upstream';
  return `${how} (${parsed.protocol}, model ${parsed.model})`;
}

/** The headers an answer gets: its session, tokens before and after, and what was done to it. */
export function answerHeaders(
  id: string,
  counts: LastRequest,
  projection: ConversationProjection,
  lowered: number | undefined,
  asked: number | undefined,
): Record<string, string> {
  return {
    [SESSION_HEADER]: id,
    'x-compactor-tokens-before': String(counts.tokensBefore),
    'x-compactor-tokens-after': String(counts.tokensAfter),
    'x-compactor-compacted': String(projection.decision === 'compacted'),
    ...(counts.strategy !== undefined ? { 'x-compactor-strategy': counts.strategy } : {}),
    ...(lowered !== undefined ? { [LOWERED_HEADER]: `${asked}->${lowered}` } : {}),
  };
}

/** Counts the recall rounds a request took (the sessions endpoint and the operator's line). */
export function countRecalls(ctx: CompactingContext, id: string, rounds: number): void {
  if (rounds === 0) return;
  const last = ctx.lastRequests.get(id);
  if (last !== undefined) last.made = { ...last.made, recallTurns: (last.made.recallTurns ?? 0) + rounds };
  ctx.log?.(`session ${id}: answered the model's recall calls in ${rounds} extra request(s)`);
}
