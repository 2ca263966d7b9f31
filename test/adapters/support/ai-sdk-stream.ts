import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';

type Content =
  { type: 'text'; text: string } | { type: 'tool-call'; toolCallId: string; toolName: string; input: string };

/** A model stream as an AI SDK provider sends it: the content's parts, then `finish` with its usage. */
export function streamOf(
  content: readonly Content[],
  finish: 'stop' | 'tool-calls',
  usage: unknown,
): ReadableStream<LanguageModelV4StreamPart> {
  const parts = content.flatMap((c): unknown[] =>
    c.type === 'text'
      ? [
          { type: 'text-start' as const, id: 't' },
          { type: 'text-delta' as const, id: 't', delta: c.text },
          { type: 'text-end' as const, id: 't' },
        ]
      : [c],
  );
  return new ReadableStream({
    start(controller) {
      for (const p of parts) controller.enqueue(p as LanguageModelV4StreamPart);
      controller.enqueue({ type: 'finish', finishReason: { unified: finish, raw: finish }, usage } as never);
      controller.close();
    },
  });
}
