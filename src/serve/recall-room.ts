import type { Estimator } from '../estimate/estimator.js';
import { textOf, type Message } from '../messages/message.js';
import { isClearedStub, leaveOutOldest, stubResult } from '../projection/index.js';
import { bodyTokens, loweredOutput, OUTPUT_SAFETY_SHARE } from './answer-room.js';
import { writeRequest, type ParsedRequest } from './protocols.js';

/**
 * A recall round must fit the window as the turn's first request did: the recalled original
 * comes on top of a request the projection already filled. Older results give way first (they
 * keep their recall ids), then earlier answers of the same turn, then the oldest exchanges (the
 * task names them by recall id), and a recalled original that
 * still does not fit is cut to the lines that do, with a note naming the range to ask for next.
 */

/** The window a turn's requests must fit: the proxy's capacity, the answer's room, its estimator. */
export interface RecallRoom {
  capacity: number;
  reserve: number;
  estimator: Estimator;
}

/** How a recall answer of a range begins (the answer the projection gives, and a cut one). */
const RANGE_HEAD = /^lines (\d+)-(\d+) of (\d+) of (r-[0-9a-f]{8})[^\n]*\n/;

/** A recall answer cut to its first lines that fit `room` tokens, with where to go on. */
function cutAnswer(text: string, id: string, room: number, est: Estimator): string {
  const head = RANGE_HEAD.exec(text);
  const body = head ? text.slice(head[0].length) : text;
  const lines = body.split('\n');
  const start = head ? Number(head[1]) : 1;
  const total = head ? Number(head[3]) : lines.length;
  const at = (k: number) => {
    const end = start + k - 1;
    const next = `recall ${id} with a range from line ${end + 1} for the rest`;
    return `lines ${start}-${end} of ${total} of ${id} (only these fit the context window; ${next}):\n${lines.slice(0, k).join('\n')}`;
  };
  let lo = 0;
  let hi = lines.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (est.text(at(mid)) <= room) lo = mid;
    else hi = mid - 1;
  }
  return lo === 0 ? `recall: not one line of ${id} fits the context window now.` : at(lo);
}

/** The recall id a recall call asked for (its arguments' `id`), if it names one. */
function askedId(args: string): string {
  try {
    const v = JSON.parse(args) as { id?: unknown };
    return typeof v?.id === 'string' ? v.id : '';
  } catch {
    return '';
  }
}

/**
 * Every tool result outside `keep` as its clearing stub, made from the original the client sent
 * (a shortened one too), so its recall id resolves.
 */
function clearOthers(
  messages: readonly Message[],
  keep: ReadonlySet<Message>,
  history: readonly Message[],
): Message[] {
  const calls = new Map(messages.flatMap((m) => (m.toolCalls ?? []).map((c) => [c.id, c] as const)));
  const originals = new Map(history.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m] as const));
  return messages.map((m) => {
    if (m.role !== 'tool' || keep.has(m) || isClearedStub(m)) return m;
    const call = calls.get(m.toolCallId ?? '');
    const original = originals.get(m.toolCallId) ?? m;
    return stubResult(original, call?.name ?? m.toolName ?? 'tool', call?.arguments);
  });
}

/**
 * The messages of a recall round fitted to the room: `before` (what the turn sent, earlier
 * rounds included), the model's recall `turn` and its `answers`. `earlier` are the answers of
 * earlier rounds of the same turn; `history` the conversation as the client sent it.
 */
export function fitRecallRound(
  room: RecallRoom,
  request: ParsedRequest,
  before: readonly Message[],
  turn: readonly Message[],
  answers: readonly Message[],
  earlier: ReadonlySet<Message>,
  history: readonly Message[],
): Message[] {
  const est = room.estimator;
  const margin = Math.ceil(room.capacity / OUTPUT_SAFETY_SHARE);
  const fixed = bodyTokens(writeRequest(request, []), (t) => est.text(t));
  const budget = room.capacity - room.reserve - margin - fixed;
  const whole = [...before, ...turn, ...answers];
  if (est.history(whole) <= budget) return whole;
  const fresh = new Set(answers);
  let kept = clearOthers(before, earlier, history);
  if (est.history([...kept, ...turn, ...answers]) > budget)
    kept = kept.map((m) =>
      earlier.has(m)
        ? { ...m, content: 'recall: this answer gave way to a later one; recall it again to see it.' }
        : m,
    );
  // Room for the answers (up to half the window's): older exchanges give way, named by recall id.
  const need = Math.min(est.history(answers), Math.floor(budget / 2));
  if (est.history([...kept, ...turn]) + need > budget)
    kept = [...leaveOutOldest(history, kept, budget - need - est.history(turn), est).messages];
  const rest = est.history([...kept, ...turn]);
  const share = Math.floor((budget - rest) / Math.max(1, answers.length));
  const calls = new Map(turn.flatMap((m) => (m.toolCalls ?? []).map((c) => [c.id, c] as const)));
  const cut = answers.map((m) => {
    if (!fresh.has(m) || est.message(m) <= share) return m;
    const id = askedId(calls.get(m.toolCallId ?? '')?.arguments ?? '');
    const overhead = est.message({ ...m, content: '' });
    return { ...m, content: cutAnswer(textOf(m.content), id, Math.max(0, share - overhead), est) };
  });
  return [...kept, ...turn, ...cut];
}

/**
 * The body of a recall round, written by the turn's own writer (the client's bytes where it
 * can, the tools always as the client sent them), its output limit lowered where the window
 * cannot hold it beside the messages.
 */
export function recallRoundBody(
  room: RecallRoom,
  request: ParsedRequest,
  messages: readonly Message[],
  write: (messages: readonly Message[], outputLimit: number | undefined) => string,
): string {
  const body = write(messages, undefined);
  const input = bodyTokens(body, (t) => room.estimator.text(t));
  const lowered = loweredOutput(room.capacity, input, request.maxOutput);
  return lowered === undefined ? body : write(messages, lowered);
}
