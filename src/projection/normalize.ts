import { hasToolCalls, type Message } from '../messages/message.js';
import { analyzePairing, EMPTY_ID_CALL, type Pairing } from './pairing.js';

/** Content of the synthetic result for a call that has none, as in VT Code. */
export const CANCELED_RESULT_TEXT =
  'canceled: no tool result was recorded; this bounded placeholder preserves the tool-call protocol.';

/** True when a history can be sent as is: every call answered right after its batch, nothing orphaned. */
export function isRequestHistoryValid(history: readonly Message[]): boolean {
  return analyzePairing(history).valid;
}

/**
 * Repairs call/result pairing of a request projection. Results bind to the most
 * recent earlier unmatched call with their id; invalid results are dropped;
 * unanswered calls get a synthetic cancellation result; results are re-emitted right
 * after their batch, so messages that sat between move after it. A valid history is
 * returned as the same object. Never mutates its input; unchanged messages are reused.
 */
export function normalizeHistory(history: readonly Message[]): readonly Message[] {
  return normalizeWithPairing(history).messages;
}

/**
 * {@link normalizeHistory} that also hands back the pairing analysis when the history was
 * already valid (so `messages === history` and the analysis describes it); callers that
 * analyze the result again (clearing) can reuse it instead of a second linear pass.
 */
export function normalizeWithPairing(history: readonly Message[]): {
  messages: readonly Message[];
  pairing: Pairing | null;
} {
  const pairing = analyzePairing(history);
  return pairing.valid
    ? { messages: history, pairing }
    : { messages: rebuild(history, pairing), pairing: null };
}

function rebuild(history: readonly Message[], pairing: Pairing): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < history.length; i++) {
    const m = history[i];
    if (pairing.invalid.has(i)) continue;
    const b = pairing.batchOf[i];
    if (b < 0) {
      out.push(m);
      continue;
    }
    const batch = pairing.batches[b];
    if (batch.assistantIndex !== i || !hasToolCalls(m)) continue; // a bound result: emitted with its batch
    out.push(withoutEmptyIdCalls(m, batch.resultOfCall));
    for (const r of batch.resultIndices) out.push(history[r]);
    m.toolCalls.forEach((call, pos) => {
      if (batch.resultOfCall[pos] === -1) out.push(canceledResult(call.id, call.name));
    });
  }
  return out;
}

function canceledResult(toolCallId: string, toolName: string): Message {
  return { role: 'tool', content: CANCELED_RESULT_TEXT, toolCallId, toolName };
}

/** Calls with an empty or in-batch repeated id cannot be sent, so the request drops them (the stored message keeps them). */
function withoutEmptyIdCalls(
  m: Message & { toolCalls: NonNullable<Message['toolCalls']> },
  resultOfCall: number[],
) {
  if (!resultOfCall.includes(EMPTY_ID_CALL)) return m;
  const toolCalls = m.toolCalls.filter((_, pos) => resultOfCall[pos] !== EMPTY_ID_CALL);
  const copy: Message = { ...m, toolCalls };
  if (toolCalls.length === 0) delete copy.toolCalls;
  return copy;
}
