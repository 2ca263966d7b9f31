import type { BaseMessage } from '@langchain/core/messages';
import { fromBaseMessages, toBaseMessages } from '../../../src/adapters/langchain/index.js';
import type { Estimator } from '../../../src/estimate/estimator.js';
import type { Message } from '../../../src/messages/message.js';

/**
 * Two-way bridge between canonical messages and LangChain messages for one request, over the
 * package's own converters (`context-compactor/langchain`). Messages the library leaves alone
 * map back to the very same canonical objects; messages it creates or changes (cleared
 * ToolMessages) are converted structurally. Messages and tool calls without ids convert too.
 */
export interface LangChainBridge {
  toLangChain(history: readonly Message[]): BaseMessage[];
  fromLangChain(messages: readonly BaseMessage[]): Message[];
  /** A LangChain token counter backed by the shared estimator (untouched messages hit its cache). */
  countTokens(messages: readonly BaseMessage[]): number;
}

const contentKey = (m: BaseMessage): string =>
  typeof m.content === 'string' ? m.content : JSON.stringify(m.content);

/** Creates a {@link LangChainBridge} over the replay's estimator. */
export function createLangChainBridge(estimator: Estimator): LangChainBridge {
  // Keyed by the message id we assign, because trimMessages copies every message it keeps;
  // the content it was sent with tells an untouched copy from an edited one.
  const original = new Map<string, { message: Message; content: string }>();
  // ClearToolUsesEdit recounts the whole list after every result it clears (quadratic per
  // request): count each LangChain message object once.
  const counted = new WeakMap<BaseMessage, number>();

  function back(lc: BaseMessage): Message {
    const same = typeof lc.id === 'string' ? original.get(lc.id) : undefined;
    if (same !== undefined && same.content === contentKey(lc)) return same.message;
    return fromBaseMessages([lc])[0];
  }

  return {
    toLangChain(history) {
      original.clear();
      const out = toBaseMessages(history);
      out.forEach((lc, i) => {
        lc.id = `compactor-${i}`;
        original.set(lc.id, { message: history[i], content: contentKey(lc) });
      });
      return out;
    },
    fromLangChain: (messages) => messages.map(back),
    countTokens(messages) {
      let total = 0;
      for (const lc of messages) {
        let n = counted.get(lc);
        if (n === undefined) counted.set(lc, (n = estimator.message(back(lc))));
        total += n;
      }
      return total;
    },
  };
}
