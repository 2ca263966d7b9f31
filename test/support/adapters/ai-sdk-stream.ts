import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { streamOfReply, type TestModelReply } from '#dev/loops/ai-sdk-reply.js';

/** A model stream as an AI SDK provider sends it: the content's parts, then `finish` with its usage. */
export function streamOf(
  content: TestModelReply['content'],
  finish: TestModelReply['finish'],
  usage: unknown,
): ReadableStream<LanguageModelV4StreamPart> {
  return streamOfReply({ content, finish }, usage).stream as ReadableStream<LanguageModelV4StreamPart>;
}
