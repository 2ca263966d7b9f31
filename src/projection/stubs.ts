import type { Message, ToolCall } from '../messages/message.js';

/** Inputs up to this many UTF-8 bytes stay intact on a cleared call. */
export const MAX_KEPT_INPUT_BYTES = 1_024;

/** Valid JSON that replaces a large input of a cleared call; OpenAI sends arguments verbatim, so never prose. */
export const CLEARED_INPUT_PLACEHOLDER = '{"cleared":"tool_input"}';

const STUB_NOTE =
  'Older tool result cleared to bound context growth. Full output remains in session logs; re-run the tool if raw bytes are needed.';

/**
 * The stub text of a cleared result: valid JSON naming the tool and call id. It depends
 * only on those two, so stubbing a stub yields the same text.
 */
export function clearedResultText(tool: string, toolCallId: string): string {
  return JSON.stringify({
    cleared: 'tool_result',
    reason: 'tool_result_clearing',
    note: STUB_NOTE,
    tool,
    tool_call_id: toolCallId,
  });
}

/** Whether a result's text is a stub of {@link clearedResultText} (cutting it again frees nothing worth a note). */
export function isClearedResultText(text: string): boolean {
  return text.startsWith('{"cleared":"tool_result"');
}

/** A copy of a result with its content replaced by the stub; role, id, name and metadata are kept. */
export function stubResult(result: Message, tool: string): Message {
  return { ...result, content: clearedResultText(tool, result.toolCallId ?? '') };
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
