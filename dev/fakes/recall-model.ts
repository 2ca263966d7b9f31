/**
 * A fake model whose task needs the past: it reads `files` files one per turn, then must answer
 * with the marker written at the top of the first file, which the proxy or adapter has cleared
 * by then. When the marker is not in its prompt it looks for the recall id of that file's
 * cleared result (a clearing stub, or a summary's pointer line) and calls `recall`; with neither it answers that the marker is lost. The
 * decision is read from the prompt alone, so it plays the model behind any framework or proxy.
 */
import type { SeenPrompt } from '../loops/prompt-audit.js';
import { sourceText } from '../loops/source-text.js';
import type { ServerResponse } from 'node:http';
import { wirePrompt } from './wire-prompt.js';
import type { WireProtocol } from './agent-upstream.js';
import { anthropicAnswer, chatAnswer, geminiAnswer, responsesAnswer, type Reply } from './agent-wire.js';
import { startFakeServer, type FakeServer } from './fake-http.js';
import { estimateBodyTokens } from './fake-window.js';

/** The path the model reads at step `n`. */
export const recallPath = (n: number) => `src/file-${n}.ts`;

/** The marker written at the top of file `n` (only the first one is asked for). */
export const markerOf = (n: number) => `MARKER-${((n + 1) * 2_654_435_761) % 1_000_003}`;

/** The final answer of a loop that found the first file's marker. */
export const RECALL_FINAL = (marker: string) => `The first file's marker is ${marker}.`;

/** The answer of a loop that could not find it. */
export const LOST = 'The first file is gone from my context; I cannot tell its marker.';

/** File `n` as `read_file` returns it: the marker line, then `tokens` tokens of source text. */
export function recallFile(n: number, tokens: number): string {
  return `// marker: ${markerOf(n)}\n${sourceText().read(n, tokens)}`;
}

/** What the model does next: read the next file, recall the first one, or answer. */
export type RecallStep =
  { kind: 'read'; n: number } | { kind: 'recall'; id: string } | { kind: 'answer'; text: string };

const PATH_OF = /src\/file-(\d+)\.ts/;

/** A pointer line: a recall id (or a span id), then what it held. */
const POINTER = /^- ([rs]-[0-9a-f]{8}) (.*)$/gm;

/**
 * The id to recall for the result of reading `path`: a clearing stub's recall id, else a
 * pointer line naming it (a note on left-out messages, a summary, a span's list), else a span
 * id whose list may name it. Ids in `asked` were recalled already.
 */
function recallIdFor(prompt: SeenPrompt, path: string, asked: ReadonlySet<string>): string | undefined {
  const spans: string[] = [];
  for (const m of prompt.messages)
    for (const t of m.texts) {
      if (!t.includes(path) && !t.includes('recall')) continue;
      try {
        const stub = JSON.parse(t) as { recall_id?: unknown; input?: unknown };
        if (typeof stub.recall_id === 'string' && String(stub.input).includes(path)) return stub.recall_id;
      } catch {
        // not a clearing stub
      }
      for (const [, id, line] of t.matchAll(POINTER)) {
        if (asked.has(id)) continue;
        if (id.startsWith('r-') && line.includes(path)) return id;
        if (id.startsWith('s-')) spans.push(id);
      }
    }
  return spans[0];
}

/** The ids the prompt's recall calls asked for. */
function askedIds(prompt: SeenPrompt): Set<string> {
  const out = new Set<string>();
  for (const m of prompt.messages)
    for (const c of m.calls)
      if (c.name === 'recall') out.add(String((JSON.parse(c.arguments) as { id?: unknown }).id));
  return out;
}

/** The next step of the model that needs the past, from its prompt. */
export function recallStep(prompt: SeenPrompt, files: number): RecallStep {
  let latest = -1;
  for (const m of prompt.messages)
    for (const c of m.calls) {
      const n = PATH_OF.exec(c.arguments)?.[1];
      if (c.name === 'read_file' && n !== undefined) latest = Math.max(latest, Number(n));
    }
  if (latest < files - 1) return { kind: 'read', n: latest + 1 };
  const marker = markerOf(0);
  if (prompt.messages.some((m) => m.texts.some((t) => t.includes(marker))))
    return { kind: 'answer', text: RECALL_FINAL(marker) };
  const asked = askedIds(prompt);
  // A clearing stub names the result itself: one recall of it is enough.
  const stubbed = asked.size > 0 && [...asked].some((id) => id.startsWith('r-'));
  const id = stubbed ? undefined : recallIdFor(prompt, recallPath(0), asked);
  return id === undefined ? { kind: 'answer', text: LOST } : { kind: 'recall', id };
}

/**
 * The step as a wire reply (a thought and a call, a recall call, or the final text). A recall
 * call comes bare, or after `textBeforeRecall` when given.
 */
export function recallReply(step: RecallStep, key: string, textBeforeRecall = ''): Reply {
  if (step.kind === 'answer') return { key, text: step.text };
  if (step.kind === 'read')
    return {
      key,
      text: `Reading file ${step.n}.`,
      call: { id: `call_${key}`, name: 'read_file', arguments: JSON.stringify({ path: recallPath(step.n) }) },
    };
  return {
    key,
    text: textBeforeRecall,
    call: { id: `call_${key}`, name: 'recall', arguments: JSON.stringify({ id: step.id }) },
  };
}

type Answer = (body: any, reply: Reply, res: ServerResponse, input: number) => void;

const WIRES: Record<string, [WireProtocol, Answer]> = {
  '/v1/chat/completions': ['openai-chat', chatAnswer],
  '/v1/messages': ['anthropic', anthropicAnswer],
  '/v1/responses': ['openai-responses', responsesAnswer],
};

const GEMINI_CALL = /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)(\?alt=sse)?$/;

/** The wire of a request path: one of the three, or the Gemini API (its SSE stream or one JSON answer). */
function wireOf(path: string): [WireProtocol, Answer] | undefined {
  const gemini = GEMINI_CALL.exec(path);
  if (gemini === null) return WIRES[path];
  const sse = gemini[2] !== undefined;
  return ['gemini', (body, reply, res, input) => geminiAnswer(body, reply, res, input, sse)];
}

/**
 * The model as a fake provider on 127.0.0.1 speaking Chat Completions, Messages, Responses
 * (JSON and SSE) and the Gemini API (JSON and SSE), held to `window` tokens per request.
 * `textBeforeRecall` makes it say something before it calls `recall`.
 */
export function startRecallUpstream(options: {
  window: number;
  files: number;
  textBeforeRecall?: string;
}): Promise<FakeServer> {
  let answered = 0;
  return startFakeServer(
    (req, _fault, res) => {
      const wire = wireOf(req.path);
      if (wire === undefined) return void res.writeHead(404).end();
      const [protocol, answer] = wire;
      const step = recallStep(wirePrompt(protocol, req.body), options.files);
      const reply = recallReply(step, `r${++answered}`, options.textBeforeRecall);
      answer(req.body, reply, res, estimateBodyTokens(req.body));
    },
    [],
    { window: options.window },
  );
}
