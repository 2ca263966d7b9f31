import type { Message, ToolCall } from '../messages/message.js';
import { inputPreview, recallIdOf, sizeOf } from './recall-ids.js';

/** Inputs up to this many UTF-8 bytes stay intact on a cleared call. */
export const MAX_KEPT_INPUT_BYTES = 1_024;

/** Valid JSON that replaces a large input of a cleared call; OpenAI sends arguments verbatim, so never prose. */
export const CLEARED_INPUT_PLACEHOLDER = '{"cleared":"tool_input"}';

/** How every clearing stub begins (a stub is recognised by it, and never stubbed again). */
export const STUB_START = '{"cleared":"tool_result"';

/** What a cleared result held: its recall id, its call's input (the start of it) and its size. */
export interface ClearedHeld {
  recallId: string;
  input: string;
  size: string;
}

/**
 * The stub text of a cleared result: one line of valid JSON naming the tool, the call id, the
 * recall id and what the result held. It depends only on the original result and its call, so
 * every request that clears it sends the same bytes.
 */
export function clearedResultText(tool: string, toolCallId: string, held: ClearedHeld): string {
  return JSON.stringify({
    cleared: 'tool_result',
    recall_id: held.recallId,
    tool,
    input: held.input,
    size: held.size,
    note: `Cleared to save room; recall with id ${held.recallId} returns the whole output.`,
    tool_call_id: toolCallId,
  });
}

/** Whether a result's text is a clearing stub (cutting it again frees nothing worth a note). */
export function isClearedResultText(text: string): boolean {
  return text.startsWith(STUB_START);
}

const RECALL_ID_FIELD = /"recall_id":"r-[0-9a-f]{8}"/;

/**
 * Whether a line is a clearing stub that names a recall id: it points to a removed result, so
 * what it names (the start of the call's input) is not a copy of that result.
 */
export function isRecallPointer(line: string): boolean {
  return isClearedResultText(line) && RECALL_ID_FIELD.test(line);
}

/** True when a result is already a clearing stub. */
export function isClearedStub(result: Message): boolean {
  return typeof result.content === 'string' && isClearedResultText(result.content);
}

/**
 * A copy of a result with its content replaced by the stub; role, id, name and metadata are
 * kept. A stub is returned as it is, so clearing twice equals clearing once.
 */
export function stubResult(result: Message, tool: string, input?: string): Message {
  if (isClearedStub(result)) return result;
  const held = { recallId: recallIdOf(result), input: inputPreview(input), size: sizeOf(result) };
  return { ...result, content: clearedResultText(tool, result.toolCallId ?? '', held) };
}

/** True when `s` may stay on a cleared call: at most 1,024 UTF-8 bytes. */
function fitsKept(s: string): boolean {
  // A UTF-16 unit is at most 3 UTF-8 bytes, so short strings skip the byte count.
  return s.length * 3 <= MAX_KEPT_INPUT_BYTES || Buffer.byteLength(s, 'utf8') <= MAX_KEPT_INPUT_BYTES;
}

/** True when {@link clearCallInputs} returns `call` itself: nothing to clear and no signature to drop. */
export function keepsCallAsIs(call: ToolCall, clearInputs: boolean): boolean {
  if (call.thoughtSignature !== undefined) return false;
  return (
    !clearInputs ||
    (fitsKept(call.arguments) && (call.freeformInput === undefined || fitsKept(call.freeformInput)))
  );
}

/**
 * The input-cleared form of a call whose result was replaced: arguments and freeform
 * input over 1,024 bytes become {@link CLEARED_INPUT_PLACEHOLDER} when `clearInputs`; the
 * thought signature is dropped either way. Returns the same object when nothing changes.
 */
export function clearCallInputs(call: ToolCall, clearInputs: boolean): ToolCall {
  if (keepsCallAsIs(call, clearInputs)) return call;
  const clearArgs = clearInputs && !fitsKept(call.arguments);
  const clearFreeform = clearInputs && call.freeformInput !== undefined && !fitsKept(call.freeformInput);
  const next: ToolCall = { ...call };
  if (clearArgs) next.arguments = CLEARED_INPUT_PLACEHOLDER;
  if (clearFreeform) next.freeformInput = CLEARED_INPUT_PLACEHOLDER;
  delete next.thoughtSignature;
  return next;
}
