import { z } from 'zod';
import { hashOf } from '../adapters/shared/sync-point.js';
import { anchoredPressure, usageAnchor, type AnchoredPressure } from '../estimate/usage-anchor.js';
import type { Message } from '../messages/message.js';
import type { Session } from '../session/session.js';
import type { ObjectContext, ObjectSharedContext } from './sdk.js';

/**
 * What the provider reported for the last request a session object built, kept in its state:
 * the session object's requests are sent by whoever called it (a proxy), so the count comes
 * back in its own call. Like a session's usage anchor it describes the first `messageCount`
 * messages of that request, told apart from another list by the hash of the last of them.
 */

/** State key of the last reported usage. */
const USAGE_KEY = 'usage';

export const ProviderUsageSchema = z.strictObject({
  inputTokens: z.number().int().nonnegative(),
  cachedInputTokens: z.number().int().nonnegative().optional(),
  /** How many messages of the request the count covers (the whole request as sent). */
  messageCount: z.number().int().positive(),
  /** Hash of the last of them. */
  lastHash: z.string().min(1),
});
export type ProviderUsage = z.infer<typeof ProviderUsageSchema>;

/** The usage of a request, in the shape a session object keeps. */
export function providerUsage(
  request: readonly Message[],
  usage: { inputTokens: number; cachedInputTokens?: number },
): ProviderUsage | undefined {
  const last = request.at(-1);
  if (last === undefined) return undefined;
  return { ...usage, messageCount: request.length, lastHash: hashOf(last) };
}

export function keepUsage(ctx: ObjectContext, usage: ProviderUsage): void {
  ctx.set<ProviderUsage>(USAGE_KEY, usage);
}

/** The usage kept, or null (none reported yet, or a state this version cannot read). */
export async function keptUsage(ctx: ObjectSharedContext): Promise<ProviderUsage | null> {
  const parsed = ProviderUsageSchema.safeParse(await ctx.get<unknown>(USAGE_KEY));
  return parsed.success ? parsed.data : null;
}

/**
 * Pressure of `request` anchored on the kept usage when the request still begins with the
 * messages it counted (the last of them at the same place), else the session's own figure.
 */
export function anchoredOnUsage(
  session: Session,
  request: readonly Message[],
  usage: ProviderUsage | null,
  own: AnchoredPressure,
): AnchoredPressure {
  const n = usage?.messageCount ?? 0;
  if (usage === null || request.length < n || hashOf(request[n - 1]) !== usage.lastHash) return own;
  const anchor = usageAnchor(request.slice(0, n), usage.inputTokens);
  return anchoredPressure(request, session.estimator, session.limits.prefixTokens ?? 0, anchor);
}
