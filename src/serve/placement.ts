import type { IncomingHttpHeaders } from 'node:http';
import { isGeminiPath } from './gemini.js';
import type { ProtocolName } from './protocols.js';

/**
 * Where a request on none of the compacting paths goes (model lists, token counts, files …):
 * only to the upstream of the protocol it belongs to, so a client's credential never reaches
 * another provider's host. A request no upstream is known to serve is refused.
 */
export type Placement = { protocol: ProtocolName } | { refused: string };

const LONGEST_SHOWN = 120;

/** The upstream protocol of a request by its path and credentials, or why it has none. */
export function placeRequest(method: string, url: string, headers: IncomingHttpHeaders): Placement {
  const { pathname: path, searchParams } = new URL(url, 'http://proxy');
  const underV1 = path === '/v1' || path.startsWith('/v1/');
  // Gemini's own paths; and its key (header or query) on its `/v1` API.
  if (isGeminiPath(path)) return { protocol: 'gemini' };
  const geminiKey = headers['x-goog-api-key'] !== undefined || searchParams.has('key');
  if (geminiKey && underV1) return { protocol: 'gemini' };
  const anthropic =
    path.startsWith('/v1/messages') ||
    path.startsWith('/v1/complete') ||
    headers['anthropic-version'] !== undefined ||
    headers['x-api-key'] !== undefined;
  if (!geminiKey && underV1) return { protocol: anthropic ? 'anthropic' : 'openai-chat' };
  const shown = path.length > LONGEST_SHOWN ? `${path.slice(0, LONGEST_SHOWN)}…` : path;
  return {
    refused: geminiKey
      ? `compactor: ${method} ${shown} carries a Gemini key but is not a Gemini API path; not forwarded`
      : `compactor: no upstream is configured for ${method} ${shown}`,
  };
}
