import { textsOf, type SeenMessage, type SeenPrompt } from '../loops/prompt-audit.js';
import type { WireProtocol } from './agent-upstream.js';

/*
 * A request body as a provider received it, in the plain pieces the loop audit counts and
 * checks (texts, calls and the results that answer them, tool schemas) — so a request that
 * went through a proxy is audited with the same tiktoken count and pairing check as the
 * framework loops.
 */

const str = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v ?? ''));

function anthropicPrompt(body: any): SeenPrompt {
  const seen: SeenPrompt = {
    system: textsOf(body.system),
    messages: [],
    tools: JSON.stringify(body.tools ?? []),
  };
  for (const m of body.messages ?? []) {
    const blocks: any[] =
      typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content ?? []);
    const texts: string[] = [];
    const calls: SeenMessage['calls'] = [];
    for (const b of blocks) {
      if (b?.type === 'tool_use')
        calls.push({ id: str(b.id), name: str(b.name), arguments: JSON.stringify(b.input) });
      else if (b?.type === 'tool_result')
        seen.messages.push({
          role: 'tool',
          texts: textsOf(b.content),
          calls: [],
          answers: str(b.tool_use_id),
        });
      else texts.push(...textsOf(b));
    }
    if (texts.length > 0 || calls.length > 0) seen.messages.push({ role: m.role, texts, calls });
  }
  return seen;
}

function chatPrompt(body: any): SeenPrompt {
  const seen: SeenPrompt = { system: [], messages: [], tools: JSON.stringify(body.tools ?? []) };
  for (const m of body.messages ?? []) {
    if (m.role === 'system' || m.role === 'developer') {
      seen.system.push(...textsOf(m.content));
      continue;
    }
    seen.messages.push({
      role: m.role,
      texts: textsOf(m.content),
      calls: (m.tool_calls ?? []).map((c: any) => ({
        id: str(c.id),
        name: str(c.function?.name),
        arguments: str(c.function?.arguments),
      })),
      ...(m.role === 'tool' ? { answers: str(m.tool_call_id) } : {}),
    });
  }
  return seen;
}

function responsesPrompt(body: any): SeenPrompt {
  const seen: SeenPrompt = {
    system: body.instructions ? textsOf(body.instructions) : [],
    messages: [],
    tools: JSON.stringify(body.tools ?? []),
  };
  const input: any[] =
    typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input ?? []);
  for (const it of input) {
    if (it?.type === 'function_call')
      seen.messages.push({
        role: 'assistant',
        texts: [],
        calls: [{ id: str(it.call_id), name: str(it.name), arguments: str(it.arguments) }],
      });
    else if (it?.type === 'function_call_output')
      seen.messages.push({ role: 'tool', texts: textsOf(it.output), calls: [], answers: str(it.call_id) });
    else if (it?.role === 'system' || it?.role === 'developer') seen.system.push(...textsOf(it.content));
    else if (it?.role) seen.messages.push({ role: it.role, texts: textsOf(it.content), calls: [] });
    else seen.messages.push({ role: 'user', texts: textsOf(it), calls: [] });
  }
  return seen;
}

// Gemini: `contents` of user and model turns whose parts are text, a functionCall or a
// functionResponse (paired by id), `systemInstruction`, and function declarations as tools.
function geminiPrompt(body: any): SeenPrompt {
  const seen: SeenPrompt = {
    system: textsOf(body.systemInstruction?.parts ?? body.systemInstruction),
    messages: [],
    tools: JSON.stringify(body.tools ?? []),
  };
  for (const c of body.contents ?? []) {
    const texts: string[] = [];
    const calls: SeenMessage['calls'] = [];
    for (const p of c?.parts ?? []) {
      if (p?.functionCall)
        calls.push({
          id: str(p.functionCall.id),
          name: str(p.functionCall.name),
          arguments: JSON.stringify(p.functionCall.args ?? {}),
        });
      else if (p?.functionResponse)
        seen.messages.push({
          role: 'tool',
          texts: textsOf(p.functionResponse.response),
          calls: [],
          answers: str(p.functionResponse.id),
        });
      else if (typeof p?.text === 'string') texts.push(p.text);
      else texts.push(JSON.stringify(p));
    }
    if (texts.length > 0 || calls.length > 0)
      seen.messages.push({ role: c.role === 'model' ? 'assistant' : 'user', texts, calls });
  }
  return seen;
}

/** The prompt a provider received in a request of the given protocol. */
export function wirePrompt(protocol: WireProtocol, body: unknown): SeenPrompt {
  const b = (body ?? {}) as any;
  if (protocol === 'anthropic') return anthropicPrompt(b);
  if (protocol === 'openai-chat') return chatPrompt(b);
  if (protocol === 'gemini') return geminiPrompt(b);
  return responsesPrompt(b);
}
