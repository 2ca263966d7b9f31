import { z } from 'zod';
import type { Json } from '../../messages/message.js';
import type { CallSite } from '../classify-error.js';
import {
  bearerHeaders,
  parseResponse,
  withInstructions,
  type WireBody,
  type WireDialect,
} from '../dialect.js';
import { truncatedStream } from '../http.js';
import { forwardedFields } from '../request-fields.js';
import { wireTools } from '../tool-catalog.js';
import {
  eventData,
  isEventObject as isObj,
  streamError,
  type EventObject as Obj,
  type SseEvent,
} from '../sse.js';
import { createStandaloneClient, responsesUsage } from './compact-client.js';
import { textOfResponsesItem, toResponsesInput } from './convert.js';

/**
 * The OpenAI Responses dialect (OpenAI, OpenResponses): Local summaries over `POST /responses`
 * with `store: false`, streamed answers folded into a `Response` object, and native compaction
 * over `POST /responses/compact` (compact-client.ts). Vercel and xAI summarize over Chat but
 * compact here too: the strategy, not the summary wire, picks the native client.
 */

/** OpenAI Responses stream → a `Response` object (`output`, `usage`, `status`, `incomplete_details`). */
export async function foldResponsesStream(site: CallSite, events: AsyncIterable<SseEvent>): Promise<Obj> {
  const items: Json[] = [];
  const text: string[] = [];
  for await (const ev of events) {
    if (ev.data === '[DONE]') break;
    const d = eventData(site, ev);
    if (!d) continue;
    const type = typeof d.type === 'string' ? d.type : ev.event;
    if (type === 'error' || (d.error !== undefined && d.error !== null && type !== 'response.failed'))
      throw streamError(site, d);
    if (type === 'response.output_item.done' && typeof d.output_index === 'number' && isObj(d.item)) {
      items[d.output_index] = d.item;
    } else if (type === 'response.output_text.delta' && typeof d.delta === 'string') {
      text.push(d.delta);
    } else if (type === 'response.failed') {
      throw streamError(site, d);
    } else if ((type === 'response.completed' || type === 'response.incomplete') && isObj(d.response)) {
      const r = d.response;
      const output =
        Array.isArray(r.output) && r.output.length > 0 ? r.output : items.filter((x) => x !== undefined);
      // Deltas only fill in when no authoritative item carried the text.
      if (output.length === 0 && text.length > 0) {
        output.push({
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: text.join('') }],
        });
      }
      return { ...r, output };
    }
  }
  throw truncatedStream(site, 'response.completed');
}

const ResponsesResponseSchema = z.looseObject({
  output: z.array(z.looseObject({ type: z.string().optional() })),
  status: z.string().nullish(),
  incomplete_details: z.looseObject({ reason: z.string().optional() }).nullish(),
  usage: z
    .looseObject({
      input_tokens: z.number().optional(),
      output_tokens: z.number().optional(),
      input_tokens_details: z.looseObject({ cached_tokens: z.number().optional() }).nullish(),
    })
    .nullish(),
});

/** The OpenAI Responses dialect. */
export const openaiResponsesDialect: WireDialect = {
  path: '/responses',
  headers: (route) => bearerHeaders(route),
  body(_route, r, stream) {
    const body: WireBody = { model: r.model, input: toResponsesInput(withInstructions(r)), store: false };
    if (r.system) body.instructions = r.system;
    const tools = wireTools(r.tools ?? [], 'responses', (t) => ({
      type: 'function',
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      parameters: (t.parameters ?? { type: 'object', properties: {} }) as Json,
      strict: false,
    }));
    if (tools.length > 0) {
      body.tools = tools;
      body.tool_choice = 'none';
    }
    if (r.maxOutputTokens !== undefined) body.max_output_tokens = r.maxOutputTokens;
    Object.assign(body, forwardedFields(r.requestFields, 'responses'));
    if (stream) body.stream = true;
    return body;
  },
  read(json, site) {
    const p = parseResponse(ResponsesResponseSchema, json, site, 'responses');
    const text = p.output
      .filter((i) => i.type === 'message' && i.role === 'assistant')
      .map((i) => textOfResponsesItem(i as { [k: string]: Json }))
      .join('');
    const finishReason =
      p.status === 'incomplete' && p.incomplete_details?.reason === 'max_output_tokens'
        ? 'length'
        : p.status === 'completed' || p.status == null
          ? 'stop'
          : 'other';
    const usage = responsesUsage(p.usage);
    return { text, finishReason, ...(usage ? { usage } : {}) };
  },
  fold: foldResponsesStream,
  convert: toResponsesInput,
  native: { strategy: 'nativeStandalone', client: createStandaloneClient },
};
