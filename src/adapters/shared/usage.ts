import type { ConversationProjection } from './conversations.js';

/** A count a provider reported, when it is one: frameworks leave fields out or set them to null. */
const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;

/**
 * Records what the provider reported for the request a projection produced into the
 * conversation's session: it feeds cache health and anchors the next request's pressure on
 * the provider's own count. Usage without a usable input count is ignored (a fake or a
 * provider that reports none), never an error in the caller's loop.
 */
export function recordProviderUsage(
  projection: Pick<ConversationProjection, 'session' | 'request' | 'onUsage'>,
  inputTokens: unknown,
  cachedInputTokens?: unknown,
): void {
  const input = count(inputTokens);
  if (input === undefined) return;
  const cached = count(cachedInputTokens);
  const usage = {
    inputTokens: input,
    ...(cached !== undefined && cached <= input ? { cachedInputTokens: cached } : {}),
  };
  projection.session.recordUsage(usage, projection.request);
  projection.onUsage?.(usage);
}
