import { z } from 'zod';
import { exportGemini } from '../formats/gemini.js';
import type { Json } from '../messages/message.js';
import type { CallSite } from '../providers/classify-error.js';
import { parseResponse, withInstructions } from '../providers/dialect.js';
import type { SummaryRequest, SummaryResponse } from '../providers/types.js';

/**
 * A summary written by a Gemini session's own model: one `generateContent` call with the
 * session's system instruction and function declarations (calls turned off), the fork to
 * summarize, and the instructions as the last user turn.
 */

/** The non-streaming call of a proxied request's URL (its key in the query kept). */
export function geminiSummaryUrl(url: string): string {
  const u = new URL(url);
  u.pathname = u.pathname.replace(/:(streamGenerateContent|countTokens)$/, ':generateContent');
  u.searchParams.delete('alt');
  return u.toString();
}

/** The summary request's body. */
export function geminiSummaryBody(request: SummaryRequest): Record<string, Json> {
  const contents = (JSON.parse(exportGemini(withInstructions(request))) as { contents: Json[] }).contents;
  const declarations = (request.tools ?? [])
    .filter((t) => t.native === undefined)
    .map((t) => ({
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      ...(t.parameters !== undefined ? { parametersJsonSchema: t.parameters as Json } : {}),
    }));
  return {
    contents,
    ...(request.system !== undefined ? { systemInstruction: { parts: [{ text: request.system }] } } : {}),
    ...(declarations.length > 0
      ? {
          tools: [{ functionDeclarations: declarations }],
          toolConfig: { functionCallingConfig: { mode: 'NONE' } },
        }
      : {}),
    generationConfig: { maxOutputTokens: request.maxOutputTokens ?? 4_096 },
  };
}

const Answer = z.looseObject({
  candidates: z
    .array(
      z.looseObject({
        content: z
          .looseObject({
            parts: z
              .array(z.looseObject({ text: z.string().optional(), thought: z.boolean().optional() }))
              .optional(),
          })
          .optional(),
        finishReason: z.string().optional(),
      }),
    )
    .min(1),
  usageMetadata: z
    .looseObject({
      promptTokenCount: z.number().optional(),
      candidatesTokenCount: z.number().optional(),
      cachedContentTokenCount: z.number().optional(),
    })
    .optional(),
});

/** The summary text, finish reason and usage of a `generateContent` answer. */
export function readGeminiAnswer(json: unknown, site: CallSite): SummaryResponse {
  const a = parseResponse(Answer, json, site, 'generateContent');
  const first = a.candidates[0];
  const text = (first.content?.parts ?? [])
    .filter((p) => p.thought !== true)
    .map((p) => p.text ?? '')
    .join('');
  const reason = first.finishReason;
  const u = a.usageMetadata;
  return {
    text,
    finishReason: reason === 'STOP' ? 'stop' : reason === 'MAX_TOKENS' ? 'length' : 'other',
    ...(u !== undefined
      ? {
          usage: {
            ...(u.promptTokenCount !== undefined ? { inputTokens: u.promptTokenCount } : {}),
            ...(u.candidatesTokenCount !== undefined ? { outputTokens: u.candidatesTokenCount } : {}),
            ...(u.cachedContentTokenCount !== undefined
              ? { cachedInputTokens: u.cachedContentTokenCount }
              : {}),
          },
        }
      : {}),
  };
}
