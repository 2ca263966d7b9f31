/** One reply of an AI SDK test model: text and tool-call parts, and why it stopped. */
export interface TestModelReply {
  content: Array<
    | { type: 'text'; text: string }
    | { type: 'tool-call'; toolCallId: string; toolName: string; input: string }
  >;
  finish: 'stop' | 'tool-calls';
}

/** The parts an AI SDK test model streams for a reply: each text as start/delta/end, calls as they are, then the finish. */
export function streamOfReply(reply: TestModelReply, usage: unknown): { stream: ReadableStream } {
  const chunks = reply.content.flatMap((c): unknown[] =>
    c.type === 'text'
      ? [
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: c.text },
          { type: 'text-end', id: 't' },
        ]
      : [c],
  );
  chunks.push({ type: 'finish', finishReason: { unified: reply.finish, raw: reply.finish }, usage });
  return {
    stream: new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    }),
  };
}
