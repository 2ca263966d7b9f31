import type { Json } from '../messages/message.js';
import type { ToolSchema } from './types.js';

/**
 * A request's tool list on one wire: function tools in the wire's own form (`asFunction`), a
 * provider tool written for this wire as the client sent it, and one written for another
 * wire left out (no wire has a faithful translation of another's built-in tools).
 */
export function wireTools(
  tools: readonly ToolSchema[],
  wire: NonNullable<ToolSchema['native']>['wire'],
  asFunction: (tool: ToolSchema) => Json,
): Json[] {
  return tools.flatMap((t) => {
    if (t.native === undefined) return [asFunction(t)];
    return t.native.wire === wire ? [t.native.tool] : [];
  });
}
