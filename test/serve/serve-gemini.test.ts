import { afterAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { TASK, GOAL_LINE } from '#dev/loops/loop-matrix.js';
import { startGeminiUpstream, type GeminiUpstream } from '#dev/fakes/gemini-upstream.js';
import { estimateBodyTokens, requestedOutputTokens } from '#dev/fakes/fake-window.js';
import { freeEncoders } from '#src/estimate/index.js';
import { startServer, type RunningServer } from '#src/serve/index.js';
import {
  heldWrites,
  sendJson,
  startFakeServer,
  type FakeServer,
  type RecordedRequest,
} from '#support/fake-http.js';
import { argsOfStep, runGeminiLoop, stepOfArgs, type GeminiLoop } from '#support/gemini-cli-loop.js';
import { withRecallTool } from '#support/serve/recall-tool.js';

afterAll(() => freeEncoders());

const KEY = 'gemini-test-key-5f1c9a';
const MODEL = 'gemini-2.5-flash';
const STEPS = 12;
const RESULT_TOKENS = 4_000;
const FINAL = 'Done: every file was read.';
const SYSTEM = Array.from(
  { length: 60 },
  (_, i) =>
    `Rule ${i + 1}: you are an interactive CLI agent; read files before changing them and keep answers short.`,
).join('\n');

/** Counts the passes of a reader against the waits of a writer, so each write waits for the read before it. */
function turnstile() {
  let passes = 0;
  const waiting: (() => void)[] = [];
  return {
    pass() {
      const next = waiting.shift();
      if (next) next();
      else passes++;
    },
    wait(): Promise<void> {
      if (passes > 0) {
        passes--;
        return Promise.resolve();
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

/** A fake of the other providers: it records what reaches it (nothing should). */
const startOtherProvider = (window: number) =>
  startFakeServer((_req, _fault, res) => sendJson(res, 200, { object: 'list', data: [] }), [], { window });

const isSummaryCall = (r: RecordedRequest) => r.body?.toolConfig?.functionCallingConfig?.mode === 'NONE';

/** Why a request's function calls and responses do not pair, or undefined when they do. */
function pairingProblem(body: any): string | undefined {
  const contents: any[] = body?.contents ?? [];
  for (const [i, c] of contents.entries()) {
    const calls = (c.parts ?? []).filter((p: any) => p.functionCall).map((p: any) => p.functionCall.name);
    const results = (c.parts ?? [])
      .filter((p: any) => p.functionResponse)
      .map((p: any) => p.functionResponse.name);
    if (results.length > 0) {
      const before = contents[i - 1];
      const asked = (before?.parts ?? [])
        .filter((p: any) => p.functionCall)
        .map((p: any) => p.functionCall.name);
      if (before?.role !== 'model' || asked.join() !== results.join())
        return `contents[${i}] answers ${results.join()} after ${asked.join() || 'no calls'}`;
    }
    if (calls.length > 0 && i < contents.length - 1) {
      const after = (contents[i + 1].parts ?? []).filter((p: any) => p.functionResponse).length;
      if (after !== calls.length) return `contents[${i}]'s ${calls.length} calls get ${after} responses`;
    }
  }
  return undefined;
}

/** Whether the task (or a summary restating it) reaches the model. */
const taskPresent = (r: RecordedRequest) => JSON.stringify(r.body?.contents ?? []).includes(GOAL_LINE);

async function setup(
  window: number,
  paced?: (res: any) => any,
  compacting = false,
  summarizer: 'upstream' | 'offline' = 'upstream',
) {
  const gemini = await startGeminiUpstream({
    window,
    stepOf: stepOfArgs,
    ...(paced ? { paced } : {}),
    script: { steps: STEPS, toolName: 'read_file', args: argsOfStep, finalAnswer: FINAL, goal: GOAL_LINE },
  });
  const other = await startOtherProvider(window);
  const server = await startServer({
    port: 0,
    capacity: window,
    geminiUpstream: gemini.baseUrl,
    openaiUpstream: other.url,
    anthropicUpstream: other.url.replace(/\/v1$/, ''),
    http: { retries: 0 },
    summarizer,
    // Compaction instead of clearing: the summaries come from the Gemini upstream's model.
    ...(compacting ? { session: { policy: { enabled: false, clearWhenPassBuysFewerTurns: 0 } } } : {}),
  });
  return { gemini, other, server };
}

async function teardown(s: { gemini: GeminiUpstream; other: FakeServer; server: RunningServer }) {
  await s.server.close();
  await Promise.all([s.gemini.close(), s.other.close()]);
}

describe('compactor serve: the Gemini API', () => {
  const cases: {
    window: number;
    mode: GeminiLoop['mode'];
    compacting?: boolean;
    summarizer?: 'upstream' | 'offline';
  }[] = [
    { window: 16_000, mode: 'sse' },
    { window: 32_000, mode: 'sse' },
    { window: 16_000, mode: 'json' },
    { window: 16_000, mode: 'array' },
    { window: 32_000, mode: 'sse', compacting: true },
    { window: 16_000, mode: 'json', compacting: true, summarizer: 'offline' },
  ];
  for (const { window, mode, compacting = false, summarizer = 'upstream' } of cases)
    it(`H1/C1/N1: a Gemini CLI loop (${STEPS} reads of ${RESULT_TOKENS} tokens, ${mode}${compacting ? `, compacting (${summarizer} summaries)` : ''}) at ${window}: every request fits, pairs and keeps the task; the key goes to the Gemini upstream only`, async () => {
      const gate = turnstile();
      const paced = mode === 'sse' ? (res: any) => heldWrites(res, () => gate.wait()) : undefined;
      const s = await setup(window, paced, compacting, summarizer);
      try {
        const result = await runGeminiLoop({
          base: s.server.url,
          model: MODEL,
          key: KEY,
          mode,
          loop: 'A',
          task: TASK,
          system: SYSTEM,
          resultTokens: RESULT_TOKENS,
          maxTurns: STEPS + 2,
          onEvent: () => gate.pass(),
        });
        expect(result.finalText).toBe(FINAL);
        expect(result.turns).toBe(STEPS + 1);
        const agent = s.gemini.requests.filter((r) => !isSummaryCall(r));
        expect(agent).toHaveLength(STEPS + 1);
        const sizes = s.gemini.requests.map(
          (r) => estimateBodyTokens(r.body) + requestedOutputTokens(r.body),
        );
        const largest = Math.max(...sizes);
        // Without the proxy the last request alone would hold every file read.
        const direct = STEPS * RESULT_TOKENS;
        console.log(
          `gemini ${mode}${compacting ? ' compacting' : ''} at ${window}: largest request ${largest} tokens (direct would reach ${direct}+), ${s.gemini.requests.length - agent.length} summaries`,
        );
        expect(largest).toBeLessThanOrEqual(window);
        expect(s.gemini.requests.map((r) => pairingProblem(r.body)).filter((p) => p !== undefined)).toEqual(
          [],
        );
        expect(agent.filter((r) => !taskPresent(r))).toEqual([]);
        // Parts the proxy does not model go back as the client sent them (the calls' signatures).
        const calls = agent.flatMap((r) =>
          (r.body.contents as any[]).flatMap((c) => (c.parts ?? []).filter((p: any) => p.functionCall)),
        );
        expect(calls.length).toBeGreaterThan(STEPS);
        expect(calls.filter((p) => p.thoughtSignature !== 'skip_thought_signature_validator')).toEqual([]);
        const summaries = s.gemini.requests.length - agent.length;
        // Summaries come from the Gemini upstream's model, or from the embedded summarizer.
        if (compacting && summarizer === 'upstream') expect(summaries).toBeGreaterThanOrEqual(1);
        if (summarizer === 'offline') {
          expect(summaries).toBe(0);
          expect(agent.filter((r) => r.raw.includes('Previous conversation summary')).length).toBeGreaterThan(
            0,
          );
        }
        // Paths as the client wrote them; the key with every request, to this host only.
        for (const r of s.gemini.requests) {
          expect(r.path).toMatch(
            /^\/v1beta\/models\/gemini-2\.5-flash:(streamGenerateContent|generateContent)/,
          );
          expect(r.headers['x-goog-api-key']).toBe(KEY);
        }
        expect(s.other.requests).toEqual([]);
        // Every answer names its session and its counts; the history was cut down at some point.
        expect(new Set(result.headers.map((h) => h['x-compactor-session'])).size).toBe(1);
        const cut = result.headers.filter(
          (h) => Number(h['x-compactor-tokens-after']) < Number(h['x-compactor-tokens-before']),
        );
        expect(cut.length).toBeGreaterThan(0);
        // Streamed answers arrive event by event: the fake wrote each next event only after
        // the client had read the one before (a buffering proxy never finishes a turn).
        if (mode === 'sse') expect(result.events.every((n) => n >= 2)).toBe(true);
      } finally {
        await teardown(s);
      }
    });

  it('B2: countTokens counts what the proxy would send, fitted to the window', async () => {
    const s = await setup(16_000);
    try {
      const contents: any[] = [{ role: 'user', parts: [{ text: TASK }] }];
      for (let n = 0; n < 8; n++) {
        contents.push({
          role: 'model',
          parts: [{ functionCall: { name: 'read_file', args: argsOfStep(n) }, thoughtSignature: 'c2ln' }],
        });
        const output = `${'lorem ipsum dolor sit amet '.repeat(700)} (file ${n})`;
        contents.push({
          role: 'user',
          parts: [{ functionResponse: { id: `r${n}`, name: 'read_file', response: { output } } }],
        });
      }
      const body = { contents, tools: [{ functionDeclarations: [{ name: 'read_file' }] }] };
      const direct = estimateBodyTokens(body);
      const res = await request(`${s.server.url}/v1beta/models/${MODEL}:countTokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': KEY },
        body: JSON.stringify(body),
      });
      const answer = (await res.body.json()) as { totalTokens: number };
      expect(res.statusCode).toBe(200);
      expect(direct).toBeGreaterThan(16_000);
      expect(answer.totalTokens).toBeLessThanOrEqual(16_000);
      expect(s.gemini.requests).toHaveLength(1);
      expect(s.gemini.requests[0].path).toBe(`/v1beta/models/${MODEL}:countTokens`);
    } finally {
      await teardown(s);
    }
  });

  it('D2: a request that fits goes upstream as the client wrote it; parts the proxy does not model count toward the window', async () => {
    const s = await setup(16_000);
    const post = async (body: unknown) => {
      const res = await request(`${s.server.url}/v1beta/models/${MODEL}:generateContent?key=${KEY}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await res.body.dump();
      return res;
    };
    const turn = (n: number, code: string) => [
      {
        role: 'model',
        parts: [
          { thought: true, text: 'Thinking about the file.' },
          { text: `Reading file ${n}.`, thoughtSignature: `c2lnbmF0dXJl${n}` },
          { executableCode: { language: 'PYTHON', code } },
          { codeExecutionResult: { outcome: 'OUTCOME_OK', output: 'ok' } },
          {
            functionCall: { name: 'read_file', args: argsOfStep(n) },
            thoughtSignature: 'skip_thought_signature_validator',
          },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              id: `r${n}`,
              name: 'read_file',
              response: { output: `file ${n}` },
              willContinue: false,
            },
          },
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
    ];
    try {
      const small = {
        contents: [{ role: 'user', parts: [{ text: TASK }] }, ...turn(0, 'print(1)')],
        systemInstruction: { parts: [{ text: SYSTEM }] },
        tools: [{ functionDeclarations: [{ name: 'read_file', parametersJsonSchema: { type: 'object' } }] }],
        safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
        generationConfig: { temperature: 1.0, maxOutputTokens: 1_000, responseModalities: ['TEXT'] },
      };
      expect((await post(small)).statusCode).toBe(200);
      expect(s.gemini.requests[0].body).toEqual(withRecallTool('gemini', small));
      // Only the model's code parts are large: they must be counted for the request to fit.
      const big = `x = [${'1234567, '.repeat(3_000)}]`;
      const large = {
        ...small,
        contents: [
          { role: 'user', parts: [{ text: TASK }] },
          ...[0, 1, 2, 3].flatMap((n) => turn(n, big)),
          { role: 'user', parts: [{ text: 'Go on.' }] },
        ],
      };
      expect(estimateBodyTokens(large)).toBeGreaterThan(16_000);
      const res = await post(large);
      expect(res.statusCode).toBe(200);
      const sent = s.gemini.requests[1];
      expect(estimateBodyTokens(sent.body) + requestedOutputTokens(sent.body)).toBeLessThanOrEqual(16_000);
      expect(pairingProblem(sent.body)).toBeUndefined();
      expect(taskPresent(sent)).toBe(true);
    } finally {
      await teardown(s);
    }
  });

  it('refuses to start when the Gemini upstream is the server itself (GOOGLE_GEMINI_BASE_URL points at the proxy)', async () => {
    const taken = await startServer({ port: 0 });
    const port = new URL(taken.url).port;
    await taken.close();
    await expect(
      startServer({ port: Number(port), env: { GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${port}` } }),
    ).rejects.toThrow(
      /the Gemini upstream http:\/\/127\.0\.0\.1:\d+ is this server itself .*--gemini-upstream/,
    );
  });

  it('a malformed Gemini request is a 400 in the Gemini error shape, and nothing goes upstream', async () => {
    const s = await setup(16_000);
    try {
      const res = await request(`${s.server.url}/v1beta/models/${MODEL}:generateContent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': KEY },
        body: JSON.stringify({ contents: 'hello' }),
      });
      expect(res.statusCode).toBe(400);
      const body = (await res.body.json()) as { error: { code: number; status: string; message: string } };
      expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
      expect(body.error.message).toMatch(/contents/);
      expect(s.gemini.requests).toEqual([]);
    } finally {
      await teardown(s);
    }
  });

  it('a request on no compacting path goes only to the upstream of its own protocol, with its key; what has none is refused', async () => {
    const s = await setup(16_000);
    const get = async (path: string, headers: Record<string, string>) => {
      const res = await request(`${s.server.url}${path}`, { method: 'GET', headers });
      return { status: res.statusCode, body: (await res.body.json()) as any };
    };
    try {
      // Gemini's model list and its v1 API go to the Gemini upstream, at the path the client wrote.
      expect((await get('/v1beta/models', { 'x-goog-api-key': KEY })).status).toBe(200);
      expect((await get(`/v1/models?key=${KEY}`, {})).status).toBe(404);
      expect(s.gemini.requests.map((r) => r.path)).toEqual(['/v1beta/models', `/v1/models?key=${KEY}`]);
      expect(s.other.requests).toEqual([]);
      // A Gemini key on a path no Gemini API has goes nowhere.
      const stray = await get('/openai/models', { 'x-goog-api-key': KEY });
      expect(stray.status).toBe(404);
      expect(stray.body.error.message).toMatch(/Gemini key/);
      const unknown = await get('/api/tags', { authorization: `Bearer ${KEY}` });
      expect(unknown.status).toBe(404);
      // Nor does another provider's key on a Gemini path.
      const crossed = await get('/v1beta/models', {
        'x-api-key': 'sk-ant-other',
        'anthropic-version': '2023-06-01',
      });
      expect(crossed.status).toBe(404);
      expect(crossed.body.error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
      expect(crossed.body.error.message).toMatch(/Anthropic key/);
      expect(s.gemini.requests).toHaveLength(2);
      expect(s.other.requests).toEqual([]);
      // An OpenAI-shaped list with a bearer key goes to the OpenAI upstream only.
      expect((await get('/v1/models', { authorization: 'Bearer sk-other' })).status).toBe(200);
      expect(s.other.requests.map((r) => [r.path, r.headers.authorization])).toEqual([
        ['/v1/models', 'Bearer sk-other'],
      ]);
      expect(s.gemini.requests).toHaveLength(2);
    } finally {
      await teardown(s);
    }
  });
});
