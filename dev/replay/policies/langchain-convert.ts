import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
} from '@langchain/core/messages';
import type { Estimator } from '../../../src/estimate/estimator.js';
import { textOf, type Message } from '../../../src/messages/message.js';

/** Arguments as LangChain wants them (an object); non-object JSON is wrapped so nothing is lost. */
function argsObject(raw: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(raw);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // not JSON: wrapped below
  }
  return { input: raw };
}

/**
 * Two-way bridge between canonical messages and LangChain messages for one request.
 * Messages the library leaves alone map back to the very same canonical objects; messages
 * it creates (cleared ToolMessages) are converted structurally.
 */
export interface LangChainBridge {
  toLangChain(history: readonly Message[]): BaseMessage[];
  fromLangChain(messages: readonly BaseMessage[]): Message[];
  /** A LangChain token counter backed by the shared estimator (untouched messages hit its cache). */
  countTokens(messages: readonly BaseMessage[]): number;
}

/** Creates a {@link LangChainBridge} over the replay's estimator. */
export function createLangChainBridge(estimator: Estimator): LangChainBridge {
  // Keyed by the message id we assign, because trimMessages copies every message it keeps.
  const original = new Map<string, Message>();

  function convert(m: Message, id: string): BaseMessage {
    const content = textOf(m.content);
    if (m.role === 'system') return new SystemMessage({ content, id });
    if (m.role === 'user') return new HumanMessage({ content, id });
    if (m.role === 'tool')
      return new ToolMessage({ content, tool_call_id: m.toolCallId ?? '', name: m.toolName, id });
    return new AIMessage({
      content,
      id,
      tool_calls: (m.toolCalls ?? []).map((c) => ({
        id: c.id,
        name: c.name,
        args: argsObject(c.arguments),
        type: 'tool_call' as const,
      })),
    });
  }

  function back(lc: BaseMessage): Message {
    const same = lc.id === undefined ? undefined : original.get(lc.id);
    if (same) return same;
    const content = typeof lc.content === 'string' ? lc.content : JSON.stringify(lc.content);
    if (ToolMessage.isInstance(lc)) {
      const out: Message = { role: 'tool', content, toolCallId: lc.tool_call_id };
      if (lc.name) out.toolName = lc.name;
      return out;
    }
    if (AIMessage.isInstance(lc)) {
      const calls = (lc.tool_calls ?? []).map((c) => ({
        id: c.id ?? '',
        name: c.name,
        arguments: JSON.stringify(c.args),
      }));
      return calls.length > 0
        ? { role: 'assistant', content, toolCalls: calls }
        : { role: 'assistant', content };
    }
    if (SystemMessage.isInstance(lc)) return { role: 'system', content };
    return { role: 'user', content };
  }

  return {
    toLangChain(history) {
      original.clear();
      return history.map((m, i) => {
        const id = `compactor-${i}`;
        original.set(id, m);
        return convert(m, id);
      });
    },
    fromLangChain: (messages) => messages.map(back),
    countTokens(messages) {
      let total = 0;
      for (const lc of messages) total += estimator.message(back(lc));
      return total;
    },
  };
}
