import type { Conversations } from '../adapters/shared/conversations.js';
import type { Message } from '../messages/message.js';
import type { RecallAnswer } from '../projection/recall.js';
import type { CompactorSession, SummaryCacheReport } from '../session/index.js';

/** A conversation as kept outside the process: its current branch's session. */
export interface KeptConversation {
  /** Branches the conversation has had (1 unless the client rewrote its list). */
  branches: number;
  /** The current branch's live history (a summary in place of what was compacted). */
  history: Message[];
  /** Compactions of the current branch. */
  compactions: number;
  /** How the current branch's last summary request was built and the share of it the provider's cache served. */
  summaryCache: SummaryCacheReport | null;
  /** The session this process counts the conversation's tokens with, when it served it since it started. */
  session?: CompactorSession;
}

/** The proxy's conversations: in this process, or kept outside it (on Restate). */
export interface ProxyConversations extends Conversations {
  /**
   * For conversations kept outside the process (a proxy's on Restate): what is kept of one,
   * read from there; undefined when nothing is.
   */
  kept?(conversationId: string, signal?: AbortSignal): Promise<KeptConversation | undefined>;
  /**
   * For conversations kept outside the process: a call of the recall tool (its arguments)
   * answered from everything kept there, as the proxy holds none of it.
   */
  recallKept?(conversationId: string, args: unknown, signal?: AbortSignal): Promise<RecallAnswer>;
}
