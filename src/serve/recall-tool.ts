import type { IncomingMessage } from 'node:http';
import { importAnthropic } from '../formats/anthropic.js';
import { importGemini } from '../formats/gemini.js';
import { importOpenAIChat } from '../formats/openai-chat.js';
import { importOpenAIResponses } from '../formats/openai-responses.js';
import type { ProviderMeta } from '../formats/provider-envelope.js';
import type { Json, Message } from '../messages/message.js';
import { RECALL_TOOL, RECALL_TOOL_NAME } from '../projection/index.js';
import type { ParsedRequest, ProtocolName } from './protocols.js';
import { filledArrayClose } from './json-splice.js';
import { clientTextWith } from './client-bytes.js';
import { geminiAnswer } from './recall-stream.js';
import { isObj, type Obj } from './recall-events.js';

/**
 * The recall tool on each wire, and reading an upstream's answer for calls of it. The proxy
 * adds the tool to every request that carries tools and answers its calls itself, so the agent
 * never sees it.
 */

/** The recall tool as `protocol` writes a tool (the same bytes in every request). */
export function recallWireTool(protocol: ProtocolName): Json {
  const { name, description = '' } = RECALL_TOOL;
  const parameters = RECALL_TOOL.parameters as Json;
  switch (protocol) {
    case 'anthropic':
      return { name, description, input_schema: parameters };
    case 'openai-chat':
      return { type: 'function', function: { name, description, parameters } };
    case 'openai-responses':
      return { type: 'function', name, description, parameters, strict: false };
    case 'gemini':
      return { functionDeclarations: [{ name, description, parametersJsonSchema: parameters }] };
  }
}

/** A tool's name on any wire (a Gemini tool names each of its declarations). */
function namesOf(tool: Json): string[] {
  if (!isObj(tool)) return [];
  const fn = tool.function;
  if (isObj(fn) && typeof fn.name === 'string') return [fn.name];
  if (typeof tool.name === 'string') return [tool.name];
  const declarations = tool.functionDeclarations;
  return Array.isArray(declarations)
    ? declarations.flatMap((d) => (isObj(d) && typeof d.name === 'string' ? [d.name] : []))
    : [];
}

/**
 * The request with the recall tool added after its own tools, or undefined when it carries no
 * tools (nothing to recall from) or a tool of its own named `recall` (the agent's wins).
 */
export function withRecallTool(req: ParsedRequest): ParsedRequest | undefined {
  const provider = req.meta.provider as ProviderMeta | undefined;
  const tools = provider?.envelope?.tools;
  if (provider?.envelope === undefined || !Array.isArray(tools) || tools.length === 0) return undefined;
  if (tools.some((t) => namesOf(t).includes(RECALL_TOOL_NAME))) return undefined;
  const envelope = { ...provider.envelope, tools: [...tools, recallWireTool(req.protocol)] };
  const schemas = [...(req.envelope.tools ?? []), { ...RECALL_TOOL }];
  return {
    ...req,
    meta: { ...req.meta, provider: { ...provider, envelope } },
    envelope: { ...req.envelope, tools: schemas },
  };
}

/**
 * Where the recall tool goes in the client's own body text (after its last tool) and the JSON
 * that goes there, every other byte as it came; undefined when the tools cannot be found in the
 * text (the body is then written anew).
 */
export function recallToolInsert(
  protocol: ProtocolName,
  text: string,
  toolsClose?: number,
): { at: number; insert: string } | undefined {
  const close = toolsClose ?? filledArrayClose(text, 'tools');
  if (close < 0) return undefined;
  return { at: close, insert: `,${JSON.stringify(recallWireTool(protocol))}` };
}

/** The assistant's turn in an upstream's (non-streaming) answer, as the wire's own request would carry it. */
function assistantDoc(protocol: ProtocolName, answer: Obj): string | undefined {
  if (protocol === 'openai-chat') {
    const choices = answer.choices;
    const message = Array.isArray(choices) && isObj(choices[0]) ? choices[0].message : undefined;
    return isObj(message) ? JSON.stringify({ model: 'm', messages: [message] }) : undefined;
  }
  if (protocol === 'anthropic') {
    const { content } = answer;
    if (!Array.isArray(content)) return undefined;
    return JSON.stringify({ model: 'm', max_tokens: 1, messages: [{ role: 'assistant', content }] });
  }
  if (protocol === 'openai-responses')
    return Array.isArray(answer.output) ? JSON.stringify({ model: 'm', input: answer.output }) : undefined;
  const candidates = answer.candidates;
  const content = Array.isArray(candidates) && isObj(candidates[0]) ? candidates[0].content : undefined;
  return isObj(content) ? JSON.stringify({ contents: [content] }) : undefined;
}

/** The messages of a one-turn document of `protocol`. */
function imported(protocol: ProtocolName, doc: string): Message[] {
  const where = 'upstream answer';
  if (protocol === 'gemini') return importGemini(doc, where).messages;
  const read =
    protocol === 'anthropic'
      ? importAnthropic
      : protocol === 'openai-chat'
        ? importOpenAIChat
        : importOpenAIResponses;
  return read(doc, where).sessions[0]?.messages ?? [];
}

/**
 * The canonical messages of an upstream's answer when every tool call in it is a recall call
 * (the proxy answers those itself), else undefined: the answer goes to the client as it came.
 */
export function recallTurnOf(protocol: ProtocolName, answerText: string): Message[] | undefined {
  // Most answers call no recall: one whose text never names the tool (not even escaped) is not read.
  if (!answerText.includes(RECALL_TOOL_NAME) && !answerText.includes('\\u')) return undefined;
  let answer: unknown;
  try {
    answer = JSON.parse(answerText);
  } catch {
    return undefined;
  }
  // A Gemini stream without server-sent events is one JSON array of chunks.
  if (protocol === 'gemini' && Array.isArray(answer)) answer = geminiAnswer(answer.filter(isObj));
  if (!isObj(answer)) return undefined;
  const doc = assistantDoc(protocol, answer);
  if (doc === undefined) return undefined;
  let messages: Message[];
  try {
    messages = imported(protocol, doc);
  } catch {
    return undefined;
  }
  const calls = messages.flatMap((m) => m.toolCalls ?? []);
  return calls.length > 0 && calls.every((c) => c.name === RECALL_TOOL_NAME) ? messages : undefined;
}

/** The client's text with the recall tool after its tools (its bytes kept), or undefined when they cannot be found in it. */
export function withRecallToolText(
  req: IncomingMessage,
  protocol: ProtocolName,
  text: string,
  toolsClose?: number,
): string | undefined {
  const insert = recallToolInsert(protocol, text, toolsClose);
  return insert && clientTextWith(req, text, insert.at, insert.insert);
}
