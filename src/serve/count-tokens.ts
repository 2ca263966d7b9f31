import type { IncomingMessage, ServerResponse } from 'node:http';
import { catalogCapacity } from '../adapters/shared/conversations.js';
import { createCompactorSession } from '../session/index.js';
import {
  clearingFor,
  forward,
  readParsed,
  refusingUserErrors,
  type CompactingContext,
} from './compacting.js';
import { writeRequest } from './protocols.js';
import { answerReserve } from './answer-room.js';

/**
 * `POST /v1/messages/count_tokens` (and Gemini's `:countTokens`): the count of what the proxy
 * would send, not of the whole history the client holds — a client that decides when to compact
 * by this count (as it does by the usage of its answers) then sees the window the proxy keeps it
 * in. Nothing is stored: the request is projected on its own and fitted to the window, without
 * a summary pass.
 */
export async function handleCountTokens(
  ctx: CompactingContext,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
  protocol: 'anthropic' | 'gemini' = 'anthropic',
): Promise<string> {
  const { text, parsed } = await readParsed(req, protocol, ctx.maxBodyBytes, true);
  const capacity = ctx.capacity ?? catalogCapacity({ id: parsed.model });
  if (capacity === undefined) {
    const why = `unknown model "${parsed.model}" and no --capacity: the window is not known`;
    await forward(ctx, protocol, req, res, text, signal, { 'x-compactor-passthrough': why });
    return 'passthrough';
  }
  const messages = await refusingUserErrors(async () => {
    const session = createCompactorSession({
      limits: { capacity, reservedOutput: answerReserve(capacity, parsed.maxOutput) },
      policy: { ...clearingFor(capacity), ...ctx.policy },
      history: parsed.messages,
      envelope: {
        provider: 'framework',
        model: parsed.model,
        system: parsed.envelope.system,
        tools: parsed.envelope.tools,
      },
    });
    return session.prepareRequest().messages;
  });
  await forward(ctx, protocol, req, res, writeRequest(parsed, messages), signal, {});
  return 'counted';
}
