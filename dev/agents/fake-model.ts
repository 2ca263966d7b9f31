/**
 * The model every agent of the matrix talks to: the fake agent model of dev/fakes, in all four
 * wires (Anthropic Messages, OpenAI Chat Completions and Responses, Gemini), with what real
 * agents send beside their loop. It asks for one file per turn with the agent's own read tool,
 * then answers with the task's final answer. Its window is enforced: a request over it gets the
 * provider's own "prompt is too long" error, as a real provider would answer.
 *
 * Requests it tells apart: the proxy's summary calls (the summary prompt in them), the agent's
 * own side calls (a title, a routing classifier, its own compaction or memory step: no tools,
 * a JSON schema, or a summary instruction), and the loop's turns. The next step is read from
 * the latest tool result's id, or from the "files read so far" line of a summary the fake wrote.
 */
import type { ServerResponse } from 'node:http';
import type { Reply } from '../fakes/agent-wire.js';
import {
  answer,
  fakeSummary,
  isSummaryRequest,
  nextStep,
  protocolOfPath,
  stepCallId,
  stepThought,
  type WireProtocol,
} from '../fakes/agent-upstream.js';
import {
  overflowBody,
  sendJson,
  startFakeServer,
  type FakeServer,
  type FakeWindowOptions,
  type RecordedRequest,
} from '../fakes/fake-http.js';
import { estimateBodyTokens, requestedOutputTokens, type WindowOverflow } from '../fakes/fake-window.js';

/** What the model asks an agent to do. */
export interface MatrixTask {
  /** How many files it reads, one per turn. */
  steps: number;
  /** The agent's read tool, and its arguments for file `n`. */
  tool: { name: string; args(n: number): Record<string, unknown> };
  finalAnswer: string;
  /** The task's goal line, restated in every summary the fake writes. */
  goal: string;
  /**
   * The variant that needs the past: the final answer is a marker line of an early file, which
   * the model gives only when the marker is in the request it gets. Where that file's result
   * was cleared, it calls the recall tool (when offered) with the id the clearing left.
   */
  needsPast?: NeedsPast;
}

export interface NeedsPast {
  /** The file (0-based) whose content holds the marker. */
  file: number;
  marker: string;
  /** The file's name, as a pointer line to its left-out result names it. */
  name?: string;
  /** The final answer when the marker is nowhere in the request. */
  missing: string;
}

export type MatrixAnswered = number | 'final' | 'summary' | 'side' | 'recall';

export interface MatrixTurn {
  protocol: WireProtocol;
  answered: MatrixAnswered;
  request: RecordedRequest;
  /** Input tokens (tiktoken o200k over every string of the body) and the output it asked for. */
  input: number;
  output: number;
  /** The text the model answered with. */
  text: string;
}

export interface MatrixModel extends FakeServer {
  turns: MatrixTurn[];
  /** Requests to paths no provider serves (a proxy that sent a call to the wrong place). */
  misses: string[];
  /** The server's root (`http://127.0.0.1:PORT`), for clients that add `/v1` or `/v1beta` themselves. */
  root: string;
}

/** The proxy's own summary prompt starts so. */
const PROXY_SUMMARY = 'You are writing a checkpoint of an agent session';
/** How agents ask their model for their own compaction or memory step. */
const AGENT_SIDE =
  /CONTEXT CHECKPOINT COMPACTION|create a detailed summary|summarize the conversation|summary of the conversation|state_snapshot|memory extraction|You are a title generator/i;
const FILES_READ = /Files read so far: (\d+)\./g;
/** How a clearing stub or a shortened result names its recall id. */
const RECALL_ID = /recall with id (r-[0-9a-f]{8})/;
/** How a recall answer of some lines begins: which lines of how many, of which id. */
const RANGE_GOT = /lines (\d+)-(\d+) of (\d+) of (r-[0-9a-f]{8})/g;

/** A pointer line a removal left (a note on left-out messages, a summary, a span's list): an id and what it held. */
const POINTER = /^- ([rs]-[0-9a-f]{8}) (.*)$/gm;
/** The ids the request's recall calls asked for. */
const ASKED = /\\?"id\\?"\s*:\s*\\?"([rs]-[0-9a-f]{8})/g;

/** Every pointer line in the strings of a request body. */
function pointerLines(body: unknown): Array<[id: string, held: string]> {
  const out: Array<[string, string]> = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') for (const m of v.matchAll(POINTER)) out.push([m[1]!, m[2]!]);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(body);
  return out;
}

/**
 * The id to recall for a left-out result: a pointer line naming the file, else a span id not
 * asked for yet (its list names the rest).
 */
function pointedId(req: RecordedRequest, name: string | undefined): string | undefined {
  const asked = new Set([...req.raw.matchAll(ASKED)].map((m) => m[1]!));
  const lines = pointerLines(req.body).filter(([id]) => !asked.has(id));
  const named =
    name === undefined ? undefined : lines.find(([id, held]) => id.startsWith('r-') && held.includes(name));
  return named?.[0] ?? lines.find(([id]) => id.startsWith('s-'))?.[0];
}

/** The texts a user wrote in a message (not tool results), in any wire's shape. */
function userTexts(m: any): string {
  const content = m?.content ?? m?.parts;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p: any) => (typeof p?.text === 'string' && p.type !== 'tool_result' ? p.text : ''))
    .join('\n');
}

/** Whether the agent's last user message or its system prompt asks for its own side step. */
function agentSide(body: any): boolean {
  const items: any[] =
    body?.messages ?? (Array.isArray(body?.input) ? body.input : undefined) ?? body?.contents ?? [];
  const lastUser = [...items].reverse().find((m) => m?.role === 'user');
  const system = [
    body?.system,
    body?.instructions,
    body?.systemInstruction,
    items[0]?.role === 'system' ? items[0] : '',
  ];
  return AGENT_SIDE.test(userTexts(lastUser)) || AGENT_SIDE.test(JSON.stringify(system));
}

/** Whether a request the agent sent is a step of its loop (not a side call of its own or the proxy's summary). */
export function isLoopRequest(protocol: WireProtocol, body: any): boolean {
  if (JSON.stringify(body ?? null).includes(PROXY_SUMMARY)) return false;
  return answerSchema(body) === undefined && !isSummaryRequest(protocol, body) && !agentSide(body);
}

/** The step a request asks for: past its latest result's id, or past a fake summary's count. */
function stepOf(protocol: WireProtocol, req: RecordedRequest): number {
  let n = nextStep(protocol, req.body);
  for (const m of req.raw.matchAll(FILES_READ)) n = Math.max(n, Number(m[1]));
  return n;
}

/** The tool result item answering call `callId`, in any wire's shape. */
function resultOf(protocol: WireProtocol, body: any, callId: string): unknown {
  if (protocol === 'anthropic')
    return (body?.messages ?? [])
      .flatMap((m: any) => (Array.isArray(m?.content) ? m.content : []))
      .find((b: any) => b?.type === 'tool_result' && b.tool_use_id === callId);
  if (protocol === 'openai-chat')
    return (body?.messages ?? []).find((m: any) => m?.role === 'tool' && m.tool_call_id === callId);
  if (protocol === 'gemini')
    return (body?.contents ?? [])
      .flatMap((c: any) => c?.parts ?? [])
      .find((p: any) => p?.functionResponse && p.functionResponse.id === callId);
  return (Array.isArray(body?.input) ? body.input : []).find(
    (it: any) => it?.type === 'function_call_output' && it.call_id === callId,
  );
}

/** Whether a request offers a tool named `recall` (the proxy's). */
export function offersRecall(body: any): boolean {
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];
  return tools.some(
    (t) =>
      t?.name === 'recall' ||
      t?.function?.name === 'recall' ||
      (Array.isArray(t?.functionDeclarations) &&
        t.functionDeclarations.some((d: any) => d?.name === 'recall')),
  );
}

/**
 * The call id of a recall call at the final step: it ends as the last step's call id does, so
 * the step read back from the request stays the final one.
 */
const recallCallId = (protocol: WireProtocol, steps: number, k: number) =>
  protocol === 'anthropic' ? `toolu_recall${k}_s${steps - 1}` : `call_recall${k}_s${steps - 1}`;

/**
 * The final step of the variant that needs the past: the marker when the request holds it; else
 * a recall call with the id the marker file's cleared result names (when the tool is offered);
 * else the answer that says the marker is gone.
 */
function pastAnswer(
  protocol: WireProtocol,
  req: RecordedRequest,
  task: MatrixTask & { needsPast: NeedsPast },
  key: string,
): [MatrixAnswered, Reply] {
  const past = task.needsPast;
  if (req.raw.includes(past.marker)) return ['final', { key, text: task.finalAnswer }];
  const gone: [MatrixAnswered, Reply] = ['final', { key, text: past.missing }];
  if (!offersRecall(req.body)) return gone;
  // Distinct ids for calls after the first (each call and its result name one).
  const k = (req.raw.match(/_recall\d+_s/g) ?? []).length;
  let args: Record<string, unknown>;
  if (k > 0) {
    // Recalled already in this turn: go on past the lines it got, or give up.
    // A span's list came back instead: recall the file's id it names.
    const got = [...req.raw.matchAll(RANGE_GOT)].at(-1);
    const listed = got === undefined ? pointedId(req, past.name) : undefined;
    if (listed !== undefined) args = { id: listed };
    else if (got === undefined || Number(got[2]) >= Number(got[3])) return gone;
    else args = { id: got[4], range: { start: Number(got[2]) + 1, end: Number(got[3]) } };
  } else {
    const held = resultOf(protocol, req.body, stepCallId(protocol, past.file));
    // Left out whole: a note on the task message points to it.
    const id = held === undefined ? pointedId(req, past.name) : RECALL_ID.exec(JSON.stringify(held))?.[1];
    if (id === undefined) return gone;
    args = { id };
  }
  const call = { id: recallCallId(protocol, task.steps, k), name: 'recall', arguments: JSON.stringify(args) };
  // A call alone, with no text before it, as a model that looks something up answers.
  return ['recall', { key, text: '', call }];
}

/** A value for a JSON schema (a routing classifier's score, a next-speaker check, a title). */
function fromSchema(schema: any): unknown {
  const type = String(schema?.type ?? '').toLowerCase();
  if (Array.isArray(schema?.enum)) return schema.enum[0];
  if (type === 'object' || schema?.properties) {
    const o: Record<string, unknown> = {};
    for (const [k, v] of Object.entries<any>(schema.properties ?? {}))
      o[k] = k === 'next_speaker' ? 'user' : fromSchema(v);
    return o;
  }
  if (type === 'array') return [];
  if (type === 'boolean') return false;
  if (type === 'number' || type === 'integer') return typeof schema.minimum === 'number' ? schema.minimum : 1;
  return 'Reading files';
}

/** The JSON schema a request asks its answer to follow, in any wire's spelling. */
function answerSchema(body: any): unknown {
  const g = body?.generationConfig;
  return (
    g?.responseJsonSchema ??
    g?.responseSchema ??
    body?.response_format?.json_schema?.schema ??
    body?.output_config?.format?.schema ??
    body?.text?.format?.schema
  );
}

/** The provider's own error for a request over the window. */
export function providerOverflow(path: string, over: WindowOverflow): { status: number; body: unknown } {
  const protocol = protocolOfPath(path.split('?')[0]) ?? 'openai-chat';
  const total = over.input + over.output;
  if (protocol === 'anthropic') {
    const message =
      over.input > over.window
        ? `prompt is too long: ${over.input} tokens > ${over.window} maximum`
        : `input length and \`max_tokens\` exceed context limit: ${over.input} + ${over.output} > ${over.window}, decrease input length or \`max_tokens\` and try again`;
    return {
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message }, request_id: 'req_fake' },
    };
  }
  if (protocol === 'gemini')
    return {
      status: 400,
      body: {
        error: {
          code: 400,
          message: `The input token count (${total}) exceeds the maximum number of tokens allowed (${over.window}).`,
          status: 'INVALID_ARGUMENT',
        },
      },
    };
  const shaped = overflowBody(protocol === 'openai-responses' ? 'openai-responses' : 'openai-chat');
  const error = (shaped.body as { error: Record<string, unknown> }).error;
  const message =
    protocol === 'openai-chat'
      ? `This model's maximum context length is ${over.window} tokens. However, you requested ${total} tokens (${over.input} in the messages, ${over.output} in the completion). Please reduce the length of the messages or completion.`
      : error.message;
  return { status: 400, body: { error: { ...error, message } } };
}

/** Starts the matrix model on 127.0.0.1 (a random port). */
export async function startMatrixModel(
  options: FakeWindowOptions & { task: MatrixTask },
): Promise<MatrixModel> {
  const { task } = options;
  const turns: MatrixTurn[] = [];
  const misses: string[] = [];
  const reply = (protocol: WireProtocol, req: RecordedRequest, key: string): [MatrixAnswered, Reply] => {
    const body = req.body ?? {};
    if (req.raw.includes(PROXY_SUMMARY))
      return [
        'summary',
        { key, text: `${fakeSummary(task.goal)}\n\nFiles read so far: ${stepOf(protocol, req)}.` },
      ];
    const schema = answerSchema(body);
    if (schema !== undefined) return ['side', { key, text: JSON.stringify(fromSchema(schema)) }];
    if (!isLoopRequest(protocol, body))
      return [
        'side',
        { key, text: `${fakeSummary(task.goal)}\n\nFiles read so far: ${stepOf(protocol, req)}.` },
      ];
    const n = stepOf(protocol, req);
    if (n >= task.steps)
      return task.needsPast
        ? pastAnswer(protocol, req, { ...task, needsPast: task.needsPast }, key)
        : ['final', { key, text: task.finalAnswer }];
    const call = {
      id: stepCallId(protocol, n),
      name: task.tool.name,
      arguments: JSON.stringify(task.tool.args(n)),
    };
    return [n, { key, text: stepThought(n), call }];
  };
  const server = await startFakeServer(
    (req, _fault, res: ServerResponse) => {
      const path = req.path.split('?')[0];
      const body = req.body ?? {};
      if (req.method === 'POST' && path === '/v1/messages/count_tokens')
        return sendJson(res, 200, { input_tokens: estimateBodyTokens(body) });
      if (req.method === 'POST' && /^\/v1beta\/models\/[^/]+:countTokens$/.test(path))
        return sendJson(res, 200, { totalTokens: estimateBodyTokens(body) });
      // A connectivity check some agents make before their first call.
      if (req.method === 'HEAD') return void res.writeHead(200).end();
      if (req.method === 'GET' && path === '/v1/models')
        return sendJson(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model' }] });
      const protocol = req.method === 'POST' ? protocolOfPath(path) : undefined;
      if (!protocol) {
        misses.push(`${req.method} ${path}`);
        return sendJson(res, 404, {
          error: { type: 'not_found_error', message: `no route ${req.method} ${path}` },
        });
      }
      const [answered, r] = reply(protocol, req, `t${turns.length}`);
      const input = estimateBodyTokens(body);
      turns.push({
        protocol,
        answered,
        request: req,
        input,
        output: requestedOutputTokens(body),
        text: r.text,
      });
      answer(protocol, body, r, res, input, path);
    },
    [],
    { window: options.window, overflowAnswer: providerOverflow },
  );
  return Object.assign(server, { turns, misses, root: server.url.replace(/\/v1$/, '') });
}
