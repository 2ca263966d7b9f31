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
  const shown = path.length > LONGEST_SHOWN ? `${path.slice(0, LONGEST_SHOWN)}…` : path;
  const anthropicKey = headers['anthropic-version'] !== undefined || headers['x-api-key'] !== undefined;
  const geminiKey = headers['x-goog-api-key'] !== undefined || searchParams.has('key');
  // Gemini's own paths (never with Anthropic's key), and its key on its `/v1` API.
  if (isGeminiPath(path))
    return anthropicKey
      ? {
          refused: `compactor: ${method} ${shown} is a Gemini API path but carries an Anthropic key; not forwarded`,
        }
      : { protocol: 'gemini' };
  if (geminiKey && underV1) return { protocol: 'gemini' };
  const anthropic = path.startsWith('/v1/messages') || path.startsWith('/v1/complete') || anthropicKey;
  if (!geminiKey && underV1) return { protocol: anthropic ? 'anthropic' : 'openai-chat' };
  return {
    refused: geminiKey
      ? `compactor: ${method} ${shown} carries a Gemini key but is not a Gemini API path; not forwarded`
      : `compactor: no upstream is configured for ${method} ${shown}`,
  };
}
