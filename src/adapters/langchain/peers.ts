import { loadPeer } from '../shared/peer.js';

/** LangChain's message classes and `createMiddleware`, loaded once with a clear error when absent. */
export const messages = await loadPeer(
  () => import('@langchain/core/messages'),
  '@langchain/core',
  'langchain',
);
export const agents = await loadPeer(() => import('langchain'), 'langchain', 'langchain');
export const functionCalling = await loadPeer(
  () => import('@langchain/core/utils/function_calling'),
  '@langchain/core',
  'langchain',
);
