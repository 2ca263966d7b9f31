import { headUnits, oneLine } from '../core/text.js';
import type { ToolCall } from '../messages/message.js';
import { commandOf, parseArguments, pathsOfCall, toolKind } from '../summary/offline/tool-calls.js';

/** The longest input a pointer line shows (a command's first line up to this is kept whole). */
const INPUT_CHARS = 200;

/**
 * What a call's input was, in one line, as a pointer line names it: a command's first line,
 * the paths it named, or its arguments cut short.
 */
export function callInputOf(call: ToolCall | undefined): string {
  if (call === undefined) return '';
  const args = parseArguments(call);
  // A command by its first line, whole up to the length a receipt matches it by.
  if (toolKind(call, args) === 'shell') {
    const first = oneLine(commandOf(call, args).trim().split('\n')[0], Infinity);
    return first.length <= INPUT_CHARS ? first : `${headUnits(first, INPUT_CHARS)}…`;
  }
  const paths = pathsOfCall(call, args);
  return oneLine(paths.length > 0 ? paths.join(', ') : call.arguments, INPUT_CHARS);
}
