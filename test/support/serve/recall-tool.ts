import { recallWireTool } from '#src/serve/recall-tool.js';
import type { ProtocolName } from '#src/serve/protocols.js';

/**
 * A request body as the proxy sends it upstream when nothing else changes: the client's own,
 * with the recall tool after its tools (a body without tools goes as it came).
 */
export function withRecallTool<T>(protocol: ProtocolName, body: T): T {
  const b = body as { tools?: unknown[] };
  if (!Array.isArray(b.tools) || b.tools.length === 0) return body;
  return { ...body, tools: [...b.tools, recallWireTool(protocol)] };
}

/** {@link withRecallTool} on a body's JSON text (written back compact). */
export function withRecallToolText(protocol: ProtocolName, text: string): string {
  return JSON.stringify(withRecallTool(protocol, JSON.parse(text) as unknown));
}
