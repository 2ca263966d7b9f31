import { createServer } from 'node:http';
import { listenLocal } from '../fakes/fake-http.js';

/** One output item of a scripted Responses answer: assistant text or a function call. */
export type ResponsesOutput =
  | { type: 'message'; text: string }
  | { type: 'function_call'; callId: string; name: string; arguments: string };

/** A fake OpenAI Responses endpoint on 127.0.0.1 (`POST /v1/responses`, JSON and SSE). */
export interface FakeResponsesServer {
  /** Base URL, ending in `/v1`. */
  url: string;
  close(): Promise<void>;
}

const usage = {
  input_tokens: 1_000,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 20,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 1_020,
};

function wireItem(o: ResponsesOutput, n: number): Record<string, unknown> {
  return o.type === 'message'
    ? {
        type: 'message',
        id: `msg_${n}`,
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: o.text, annotations: [] }],
      }
    : {
        type: 'function_call',
        id: `fc_${n}`,
        status: 'completed',
        call_id: o.callId,
        name: o.name,
        arguments: o.arguments,
      };
}

/**
 * Starts the server; `answer` gets every request body as the client sent it and returns the
 * output items of the response (streamed as output-item events then `response.completed` when
 * the request asks for a stream).
 */
export async function startFakeResponses(
  answer: (body: Record<string, unknown>) => ResponsesOutput[],
): Promise<FakeResponsesServer> {
  let served = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/responses')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const n = served++;
      let output: Record<string, unknown>[];
      try {
        output = answer(body).map((o, i) => wireItem(o, n * 10 + i));
      } catch (e) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `fake server: ${(e as Error).message}` } }));
        return;
      }
      const response = {
        id: `resp_${n}`,
        object: 'response',
        created_at: 1_767_225_600,
        status: 'completed',
        model: body.model,
        output,
        usage,
      };
      if (body.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(response));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let seq = 0;
      const send = (type: string, data: Record<string, unknown>) =>
        res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
      send('response.created', { response: { ...response, status: 'in_progress', output: [] } });
      output.forEach((item, i) => {
        send('response.output_item.added', { output_index: i, item });
        send('response.output_item.done', { output_index: i, item });
      });
      send('response.completed', { response });
      res.end();
    });
  });
  return listenLocal(server);
}
