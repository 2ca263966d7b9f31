import { msg, type Message, type ToolCall } from '#src/messages/message.js';
import { createEstimator, type Estimator } from '#src/estimate/estimator.js';

/** Deterministic, WASM-free estimator: ceil(UTF-8 bytes / 4) per text. */
export function charsEstimator(): Estimator {
  return createEstimator({ encoding: 'chars' });
}

export function call(id: string, name = 'read_file', args = '{}', extra: Partial<ToolCall> = {}): ToolCall {
  return { id, name, arguments: args, ...extra };
}

/** A text of `n` characters that estimates to about n/4 tokens. */
export function body(n: number, ch = 'x'): string {
  return ch.repeat(n);
}

/** One assistant batch plus its results, each `chars` long. */
export function batch(ids: string[], chars: number, name = 'read_file'): Message[] {
  return [
    msg.assistant(
      '',
      ids.map((id) => call(id, name)),
    ),
    ...ids.map((id) => msg.tool(id, body(chars), name)),
  ];
}

/** Freezes a value and everything reachable from it, so any mutation throws (ESM is strict mode). */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}

export function isStub(m: Message): boolean {
  if (m.role !== 'tool' || typeof m.content !== 'string') return false;
  try {
    return (JSON.parse(m.content) as { cleared?: unknown }).cleared === 'tool_result';
  } catch {
    return false;
  }
}
