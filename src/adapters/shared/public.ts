/** What every adapter entry exports from the shared per-conversation state. */
export {
  conversationIdOf,
  type Conversations,
  type ConversationCall,
  type ConversationOptions,
  type ConversationProjection,
} from './conversations.js';
