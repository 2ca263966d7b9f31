import type OpenAI from 'openai';

/**
 * A Chat Completions session that grows by long steps until it compacts, as the tests of failed
 * requests send it (in memory, with a data directory, on Restate).
 */

export type Chat = OpenAI.Chat.Completions.ChatCompletionMessageParam;

export const OPENING: Chat[] = [
  { role: 'system', content: 'You review code.' },
  { role: 'user', content: 'Read the README and summarise it.' },
];

/** A long text of `n` distinct numbered words. */
const words = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${tag}${i % 97} value${(i * 7) % 101}`).join(' ');

/** The request of step `n` of a growing session: each step adds a long answer and a long question. */
export function stepRequest(n: number): Chat[] {
  const messages: Chat[] = [...OPENING];
  for (let i = 0; i < n; i++)
    messages.push(
      { role: 'assistant', content: `Read part ${i}. ${words(`a${i}w`, 300)}` },
      { role: 'user', content: `STEP-${i + 1}-ASKED: go on. ${words(`u${i}w`, 150)}` },
    );
  return messages;
}
