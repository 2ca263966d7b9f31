import { anthropicDialect } from './anthropic/dialect.js';
import { chatDialect } from './chat/dialect.js';
import type { WireDialect } from './dialect.js';
import { openaiResponsesDialect } from './openai-responses/dialect.js';

/**
 * The wire dialects by the name a catalog entry gives as its `wire`. Adding a dialect is its
 * folder, one line here, and the catalog entries that speak it.
 */
export const DIALECTS = {
  responses: openaiResponsesDialect,
  chat: chatDialect,
  messages: anthropicDialect,
} as const satisfies Record<string, WireDialect>;

/** Wire protocol a provider speaks (which dialect its summary client uses). */
export type WireApi = keyof typeof DIALECTS;

/** Every wire name, for validating catalog files. */
export const WIRE_APIS = Object.keys(DIALECTS) as [WireApi, ...WireApi[]];

/** The dialect a wire name stands for. */
export function dialectOf(wire: WireApi): WireDialect {
  return DIALECTS[wire];
}

/** The dialect whose native compaction serves `strategy`, when one does. */
export function nativeDialectFor(strategy: string): WireDialect | undefined {
  return Object.values(DIALECTS).find((d: WireDialect) => d.native?.strategy === strategy);
}
