import { request } from 'undici';
import { sourceText } from '#dev/loops/source-text.js';

/**
 * A tool loop on the wire as Gemini CLI 0.61 writes it: `POST /v1beta/models/<m>:streamGenerateContent?alt=sse`
 * with the key in `x-goog-api-key`, its system instruction and function declarations, the
 * model's turns sent back with their `functionCall` parts stamped with a thought signature, and
 * each result as a user turn's `functionResponse {id, name, response: {output}}` (the id is the
 * client's own; the model's calls carry none). It reads one file per turn until the model answers.
 */

export interface GeminiLoop {
  /** Base URL the client is pointed at (`GOOGLE_GEMINI_BASE_URL`). */
  base: string;
  model: string;
  key: string;
  /** `sse` (Gemini CLI), `array` (streamGenerateContent without alt=sse) or `json` (generateContent). */
  mode: 'sse' | 'array' | 'json';
  loop: string;
  task: string;
  system: string;
  /** Tokens of each file read. */
  resultTokens: number;
  /** Turns at most (a loop that does not end fails). */
  maxTurns: number;
  /** Called after each streamed event is read (a test may hold the upstream's next write until then). */
  onEvent?: () => void;
  /** Tokens of the file read at each step, when they differ by step (else `resultTokens`). */
  resultTokensAt?: (step: number) => number;
  /** Each content item's keys as the client writes them: `role` first, or `parts` first (the Gemini SDK's order). */
  keyOrder?: 'role-first' | 'parts-first';
}

export interface GeminiLoopResult {
  finalText: string;
  turns: number;
  /** Events read per streamed answer. */
  events: number[];
  /** The proxy's `x-compactor-*` headers of each answer. */
  headers: Record<string, string>[];
}

/** Declarations like Gemini CLI's (a shortened set: a file reader and its neighbours). */
export const GEMINI_TOOLS = [
  {
    functionDeclarations: [
      {
        name: 'read_file',
        description: 'Reads and returns the content of a specified file.',
        parametersJsonSchema: {
          type: 'object',
          properties: { file_path: { type: 'string', description: 'The path to the file to read.' } },
          required: ['file_path'],
        },
      },
      {
        name: 'run_shell_command',
        description: 'Executes a given shell command as `bash -c <command>`.',
        parametersJsonSchema: {
          type: 'object',
          properties: { command: { type: 'string' }, description: { type: 'string' } },
          required: ['command'],
        },
      },
      {
        name: 'glob',
        description: 'Finds files matching specific glob patterns.',
        parametersJsonSchema: {
          type: 'object',
          properties: { pattern: { type: 'string' } },
          required: ['pattern'],
        },
      },
    ],
  },
];

/** The step a `read_file` call names (`src/file-<n>.ts`). */
export const stepOfArgs = (args: any): number | undefined => {
  const m = /file-(\d+)\.ts$/.exec(String(args?.file_path ?? ''));
  return m ? Number(m[1]) : undefined;
};

/** The arguments of step `n`'s call. */
export const argsOfStep = (n: number) => ({ file_path: `src/file-${n}.ts` });

const SIGNATURE = 'skip_thought_signature_validator';

/** Reads an SSE body event by event; each event's JSON goes to `each`. */
async function readSse(body: AsyncIterable<Buffer>, each: (e: any) => void): Promise<number> {
  let pending = '';
  let n = 0;
  for await (const chunk of body) {
    pending += chunk.toString('utf8');
    const frames = pending.split(/\r?\n\r?\n/);
    pending = frames.pop() ?? '';
    for (const f of frames) {
      const data = f
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n');
      if (data === '') continue;
      n++;
      each(JSON.parse(data));
    }
  }
  if (pending.trim() !== '') throw new Error(`stream ended inside an event: ${pending.slice(0, 80)}`);
  return n;
}

export async function runGeminiLoop(l: GeminiLoop): Promise<GeminiLoopResult> {
  const source = sourceText();
  // The Gemini SDK writes each content item's `parts` before its `role`.
  const item = (role: string, parts: unknown[]) =>
    l.keyOrder === 'parts-first' ? { parts, role } : { role, parts };
  const contents: any[] = [item('user', [{ text: l.task }])];
  const events: number[] = [];
  const headers: Record<string, string>[] = [];
  const method = l.mode === 'json' ? 'generateContent' : 'streamGenerateContent';
  const query = l.mode === 'sse' ? '?alt=sse' : '';
  for (let turn = 0; turn < l.maxTurns; turn++) {
    const body = {
      contents,
      systemInstruction: { role: 'user', parts: [{ text: l.system }] },
      tools: GEMINI_TOOLS,
      generationConfig: { temperature: 1, topP: 0.95, topK: 64, thinkingConfig: { includeThoughts: true } },
    };
    const res = await request(`${l.base}/v1beta/models/${l.model}:${method}${query}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-goog-api-key': l.key,
        'x-goog-api-client': 'google-genai-sdk/1.30.0 gl-node/v20.20.2',
        'user-agent': `GeminiCLI/0.61.0/${l.model} (linux; x64; terminal)`,
        'x-test-loop': l.loop,
      },
      body: JSON.stringify(body),
    });
    if (res.statusCode !== 200) throw new Error(`turn ${turn}: ${res.statusCode} ${await res.body.text()}`);
    headers.push(
      Object.fromEntries(
        Object.entries(res.headers).filter(([k]) => k.startsWith('x-compactor-')) as [string, string][],
      ),
    );
    const chunks: any[] = [];
    if (l.mode === 'sse')
      events.push(
        await readSse(res.body, (e) => {
          chunks.push(e);
          l.onEvent?.();
        }),
      );
    else {
      const json: unknown = await res.body.json();
      chunks.push(...(Array.isArray(json) ? json : [json]));
    }
    const parts = chunks.flatMap((c) => c?.candidates?.[0]?.content?.parts ?? []);
    const text = parts.map((p: any) => (typeof p.text === 'string' ? p.text : '')).join('');
    const calls = parts.filter((p: any) => p.functionCall !== undefined).map((p: any) => p.functionCall);
    contents.push(
      item('model', [
        ...(text !== '' ? [{ text }] : []),
        ...calls.map((c: any) => ({ functionCall: c, thoughtSignature: SIGNATURE })),
      ]),
    );
    if (calls.length === 0) return { finalText: text, turns: turn + 1, events, headers };
    contents.push(
      item(
        'user',
        calls.map((c: any, k: number) => {
          const step = stepOfArgs(c.args) ?? turn;
          return {
            functionResponse: {
              id: `${c.name}-${l.loop}-${turn}-${k}`,
              name: c.name,
              response: { output: source.read(step, l.resultTokensAt?.(step) ?? l.resultTokens) },
            },
          };
        }),
      ),
    );
  }
  throw new Error(`the loop did not end in ${l.maxTurns} turns`);
}
