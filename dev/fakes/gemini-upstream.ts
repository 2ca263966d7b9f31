/**
 * A fake Gemini API on 127.0.0.1 that plays an agent's model, as Gemini CLI sees it:
 * `POST /v1beta/models/<model>:generateContent`, `:streamGenerateContent` (SSE with `alt=sse`,
 * else one JSON array of chunks) and `:countTokens`, and `GET /v1beta/models`. Every request
 * must carry a key (`x-goog-api-key` or `?key=`) and fit the declared window (fake-window.ts).
 *
 * It answers each agent turn with a thought and one `functionCall` (no id, as Gemini writes
 * them) until the script's last step, then with the final answer. The step is read from the
 * request: one past the step named by the latest call that has its response, so a proxy that
 * compacts older turns away still gets the right next call. A request with calls turned off
 * (`toolConfig` mode NONE), without tools, or ending in the summary instructions gets a
 * checkpoint that restates the task. As Gemini 3 does, it refuses a request that sends a
 * function call back without its thought signature.
 */
import type { ServerResponse } from 'node:http';
import { loadSummaryPrompt } from '../../src/summary/prompt.js';
import { fakeSummary, type AgentScript } from './agent-upstream.js';
import { pieces } from './agent-wire.js';
import {
  sendJson,
  startFakeServer,
  type FakeServer,
  type FakeWindowOptions,
  type RecordedRequest,
} from './fake-http.js';
import { estimateBodyTokens } from './fake-window.js';
import { FakePromptCache, type FakeUsage } from './prompt-cache.js';

const CALL = /^\/(v1beta|v1alpha|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;
const SUMMARY_MARKER = loadSummaryPrompt().instructions.slice(0, 80);

/** One model request the fake answered. */
export interface GeminiTurn {
  answered: number | 'final' | 'summary';
  request: RecordedRequest;
  /** The usage it reported: its input and what implicit caching served of it. */
  usage: FakeUsage;
}

export interface GeminiUpstream extends FakeServer {
  /** Every generate call (summaries included), in order. */
  turns: GeminiTurn[];
  /** The base URL Gemini clients take (`GOOGLE_GEMINI_BASE_URL`): no version path. */
  baseUrl: string;
}

const geminiError = (code: number, status: string, message: string) => ({ error: { code, message, status } });

/** The text of the request's last user turn (not its function responses). */
function lastUserText(body: any): string {
  const last = (body?.contents ?? []).at(-1);
  if (last?.role === 'model') return '';
  return (last?.parts ?? []).map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('\n');
}

function isSummaryRequest(body: any): boolean {
  const declared = (body?.tools ?? []).some((t: any) => (t?.functionDeclarations ?? []).length > 0);
  if (!declared) return true;
  if (body?.toolConfig?.functionCallingConfig?.mode === 'NONE') return true;
  return lastUserText(body).includes(SUMMARY_MARKER);
}

/** Where a request sends a function call without a thought signature, if it does. */
function unsignedCall(body: any): string | undefined {
  for (const [i, c] of (body?.contents ?? []).entries())
    for (const [j, p] of (c?.parts ?? []).entries())
      if (p?.functionCall !== undefined && typeof p.thoughtSignature !== 'string')
        return `contents[${i}].parts[${j}]`;
  return undefined;
}

/** One past the step of the latest call answered in the request, else 0; `stepOf` reads a call's step. */
function nextStep(body: any, stepOf: (args: any) => number | undefined): number {
  const contents: any[] = body?.contents ?? [];
  for (let i = contents.length - 1; i >= 0; i--) {
    const call = (contents[i]?.parts ?? []).find((p: any) => p?.functionCall !== undefined);
    if (contents[i]?.role !== 'model' || call === undefined) continue;
    const answered = (contents[i + 1]?.parts ?? []).some((p: any) => p?.functionResponse !== undefined);
    const step = stepOf(call.functionCall.args);
    if (step !== undefined) return answered ? step + 1 : step;
  }
  return 0;
}

/** Gemini's usage: the prompt, the answer, and what implicit caching served of the prompt. */
function usageMetadata(u: FakeUsage) {
  return {
    promptTokenCount: u.input,
    candidatesTokenCount: 20,
    totalTokenCount: u.input + 20,
    ...(u.cached > 0 ? { cachedContentTokenCount: u.cached } : {}),
  };
}

/** The answer's chunks: the text in pieces, then the call (if any) with the finish reason and usage. */
function chunks(text: string, call: { name: string; args: unknown } | undefined, u: FakeUsage, key: string) {
  const content = (parts: unknown[]) => ({ role: 'model', parts });
  const out: unknown[] = pieces(text).map((t) => ({
    candidates: [{ content: content([{ text: t }]), index: 0 }],
  }));
  out.push({
    candidates: [
      {
        content: content(call ? [{ functionCall: call }] : [{ text: '' }]),
        finishReason: 'STOP',
        index: 0,
      },
    ],
    usageMetadata: usageMetadata(u),
    modelVersion: 'fake-gemini',
    responseId: key,
  });
  return out;
}

/** The whole answer of `generateContent`: the chunks joined. */
function whole(text: string, call: { name: string; args: unknown } | undefined, u: FakeUsage, key: string) {
  const parts: unknown[] = [{ text }];
  if (call) parts.push({ functionCall: call });
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: usageMetadata(u),
    modelVersion: 'fake-gemini',
    responseId: key,
  };
}

/** Starts the fake Gemini model; `paced` may hold the writes of each streamed answer. */
export async function startGeminiUpstream(
  options: FakeWindowOptions & {
    script: AgentScript;
    /** The step a call's arguments name (the loop's own convention). */
    stepOf(args: any): number | undefined;
    paced?: (res: ServerResponse) => ServerResponse;
  },
): Promise<GeminiUpstream> {
  const { script } = options;
  const turns: GeminiTurn[] = [];
  const cache = new FakePromptCache();
  const server = await startFakeServer(
    (req, _fault, res) => {
      const url = new URL(req.path, 'http://fake');
      const key = req.headers['x-goog-api-key'] ?? url.searchParams.get('key');
      if (key === undefined || key === null || key === '')
        return sendJson(res, 401, geminiError(401, 'UNAUTHENTICATED', 'no API key'));
      if (req.method === 'GET' && url.pathname === '/v1beta/models')
        return sendJson(res, 200, {
          models: [{ name: 'models/gemini-2.5-flash', inputTokenLimit: 1_048_576 }],
        });
      const m = CALL.exec(url.pathname);
      if (req.method !== 'POST' || m === null)
        return sendJson(res, 404, geminiError(404, 'NOT_FOUND', `no route ${req.method} ${url.pathname}`));
      const body = req.body ?? {};
      // Like Gemini 3: a function call sent back without its thought signature is refused.
      const unsigned = unsignedCall(body.generateContentRequest ?? body);
      if (unsigned !== undefined)
        return sendJson(
          res,
          400,
          geminiError(400, 'INVALID_ARGUMENT', `${unsigned}: function call is missing a thought_signature`),
        );
      if (m[3] === 'countTokens')
        return sendJson(res, 200, { totalTokens: estimateBodyTokens(body.generateContentRequest ?? body) });
      const id = `t${turns.length}`;
      let answered: GeminiTurn['answered'];
      let text: string;
      let call: { name: string; args: unknown } | undefined;
      if (isSummaryRequest(body)) {
        answered = 'summary';
        text = fakeSummary(script.goal);
      } else {
        const n = nextStep(body, options.stepOf);
        answered = n >= script.steps ? 'final' : n;
        text = n >= script.steps ? script.finalAnswer : `Step ${n + 1}: reading the next file.`;
        if (n < script.steps) call = { name: script.toolName, args: script.args(n) };
      }
      const input = cache.count('gemini', body, estimateBodyTokens(body));
      turns.push({ answered, request: req, usage: input });
      if (m[3] === 'generateContent') return sendJson(res, 200, whole(text, call, input, id));
      const out = options.paced ? options.paced(res) : res;
      const events = chunks(text, call, input, id);
      if (url.searchParams.get('alt') === 'sse') {
        out.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const e of events) out.write(`data: ${JSON.stringify(e)}\r\n\r\n`);
        out.end();
      } else {
        // Without alt=sse the stream is one JSON array, written a chunk at a time.
        out.writeHead(200, { 'content-type': 'application/json' });
        events.forEach((e, i) => out.write(`${i === 0 ? '[' : ',\r\n'}${JSON.stringify(e)}`));
        out.end(']');
      }
    },
    [],
    { window: options.window },
  );
  return Object.assign(server, { turns, baseUrl: server.url.replace(/\/v1$/, '') });
}
