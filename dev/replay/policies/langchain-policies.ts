import { trimMessages } from '@langchain/core/messages';
import { ClearToolUsesEdit } from 'langchain';
import type { RetentionPolicy } from '../types.js';
import { createLangChainBridge } from './langchain-convert.js';

type EditParams = Parameters<ClearToolUsesEdit['apply']>[0];

/**
 * LangChain's real `ClearToolUsesEdit` (the context-editing middleware's edit) with its
 * defaults — trigger 100,000 tokens, keep 3 tool results, placeholder "[cleared]" — called
 * directly through its `apply({ messages, countTokens })`, which edits the array in place.
 */
export const langchainClearToolUsesPolicy: RetentionPolicy = {
  name: 'langchain-clear',
  description:
    'LangChain ClearToolUsesEdit (real library), defaults: trigger 100,000 tokens, keep 3 results.',
  source: 'library',
  async project(history, { estimator }) {
    const bridge = createLangChainBridge(estimator);
    const messages = bridge.toLangChain(history);
    const edit = new ClearToolUsesEdit();
    // `model` only serves fractional triggers (profile limits); the defaults are absolute.
    const model = undefined as unknown as EditParams['model'];
    await edit.apply({ messages, model, countTokens: (m) => bridge.countTokens(m) });
    return bridge.fromLangChain(messages);
  },
};

/**
 * LangChain's real `trimMessages` as a token-budget window: keep the system message and the
 * newest messages that fit in the local trigger (where Compactor starts clearing), the
 * kept part starting on a human or AI message so no tool result loses its call.
 */
export const langchainTrimPolicy: RetentionPolicy = {
  name: 'langchain-trim',
  description:
    "LangChain trimMessages (real library): strategy 'last', maxTokens = local trigger, includeSystem, startOn human|ai.",
  source: 'library',
  async project(history, { estimator, budgets }) {
    if (estimator.history(history) <= budgets.localTrigger) return history;
    const bridge = createLangChainBridge(estimator);
    const trimmed = await trimMessages(bridge.toLangChain(history), {
      maxTokens: budgets.localTrigger,
      strategy: 'last',
      includeSystem: true,
      startOn: ['human', 'ai'],
      tokenCounter: (m) => bridge.countTokens(m),
    });
    return bridge.fromLangChain(trimmed);
  },
};
