/**
 * Token counts remembered per text. An agent loop sends its whole history again on every turn,
 * so a fake server that checks each request against its window (or prices its prompt cache),
 * or an audit of each prompt, would otherwise count the same old messages again and again: the
 * cost of a loop's checks grew with the square of its length. Same numbers, a fraction of the work.
 */
import { tiktokenCounter } from '../../src/estimate/counters.js';

// The bound keeps the memory small; the counts are forgotten all at once when it is reached.
const MAX_REMEMBERED_CHARS = 16 * 1024 * 1024;

/** `count`, remembering its answers for texts of at least `minChars` characters; `forget` drops them. */
export function rememberCounts(
  count: (text: string) => number,
  minChars = 0,
): { count: (text: string) => number; forget: () => void } {
  const counted = new Map<string, number>();
  let countedChars = 0;
  const forget = () => {
    counted.clear();
    countedChars = 0;
  };
  const remembered = (text: string) => {
    if (text.length < minChars) return count(text);
    const known = counted.get(text);
    if (known !== undefined) return known;
    const tokens = count(text);
    if (countedChars + text.length > MAX_REMEMBERED_CHARS) forget();
    counted.set(text, tokens);
    countedChars += text.length;
    return tokens;
  };
  return { count: remembered, forget };
}

const counter = tiktokenCounter('o200k_base');
/**
 * Tokens of a text in o200k as Compactor's tiktoken counter gives them, for the fake servers.
 * Texts shorter than 64 characters cost about as much to look up as to count.
 */
export const fakeTokenCount = rememberCounts((text) => counter.count(text), 64).count;
