import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { startServer, type RunningServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { startAgentUpstream, type AgentUpstream } from '#dev/fakes/agent-upstream.js';
import { loopScript } from '#dev/clients/tool-loop.js';
import { sourceText } from '#dev/loops/source-text.js';
import { recallIdOf } from '#src/projection/recall-ids.js';
import { msg } from '#src/messages/message.js';

afterAll(() => freeEncoders());

const started: Array<RunningServer | AgentUpstream> = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});

const WIDE = /[^\0-\xff]/;
const STUB = '{"cleared":"tool_result"';

/**
 * Tool results of source text, each with characters above U+00FF (the session holds those
 * as UTF-8 bytes): the texts a held history must give back exactly.
 */
function results(count: number): string[] {
  const source = sourceText();
  const out: string[] = [];
  for (let n = 0; out.length < count; n++) {
    const text = source.read(n, 1_500);
    if (WIDE.test(text)) out.push(`${text}\n// read ${out.length} → done`);
  }
  return out;
}

/** The body of a Chat request after `reads` tool calls, with or without a tool list. */
function body(reads: readonly string[], withTools: boolean): string {
  const messages: unknown[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Read the files one by one — then say “done”.' },
  ];
  reads.forEach((content, i) => {
    const id = `call_${i}`;
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: `{"path":"f${i}"}` } }],
    });
    messages.push({ role: 'tool', tool_call_id: id, content });
  });
  const tools = [
    {
      type: 'function',
      function: {
        name: 'read_file',
        parameters: { type: 'object', properties: { path: { type: 'string' } } },
      },
    },
  ];
  return JSON.stringify({ model: 'gpt-4o', messages, max_tokens: 512, ...(withTools ? { tools } : {}) });
}

async function setup(capacity: number) {
  const upstream = await startAgentUpstream({ window: capacity, script: loopScript(40) });
  const server = await startServer({ port: 0, openaiUpstream: upstream.url, capacity });
  started.push(upstream, server);
  return { upstream, server };
}

async function send(server: RunningServer, text: string): Promise<void> {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-held-text-test' },
    body: text,
  });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
}

describe('serve: a history that holds its long texts as UTF-8', () => {
  it('D2: a request the projection leaves alone goes upstream as the client sent it, byte for byte', async () => {
    const { upstream, server } = await setup(200_000);
    const reads = results(6);
    const sent: string[] = [];
    for (let n = 1; n <= reads.length; n++) {
      sent.push(body(reads.slice(0, n), false));
      await send(server, sent.at(-1)!);
    }
    expect(upstream.requests.map((r) => r.raw)).toEqual(sent);
  });

  it('C6: after a clearing step every result it kept arrives as the client wrote it, and the held ones read back whole', async () => {
    const { upstream, server } = await setup(16_000);
    const reads = results(12);
    for (let n = 1; n <= reads.length; n++) await send(server, body(reads.slice(0, n), true));
    const last = upstream.requests.at(-1)!;
    const tools = (
      last.body as { messages: Array<{ role: string; content: string; tool_call_id?: string }> }
    ).messages.filter((m) => m.role === 'tool');
    const cleared = tools.filter((m) => m.content.startsWith(STUB));
    const kept = tools.filter((m) => !m.content.startsWith(STUB));
    expect(cleared.length).toBeGreaterThan(0);
    expect(kept.length).toBeGreaterThan(0);
    // A stub is made from the held text: its id and size are those of the text the client sent.
    for (const m of cleared) {
      const i = Number(m.tool_call_id!.slice('call_'.length));
      const stub = JSON.parse(m.content) as { recall_id: string; size: string };
      expect(stub.recall_id).toBe(recallIdOf(msg.tool(m.tool_call_id!, reads[i]!)));
      expect(stub.size).toMatch(new RegExp(`^${reads[i]!.length} chars, `));
    }
    for (const m of kept) {
      const i = Number(m.tool_call_id!.slice('call_'.length));
      expect(m.content).toBe(reads[i]);
      // Spliced into the client's text: its own bytes, not the text written again.
      expect(last.raw).toContain(JSON.stringify(reads[i]));
    }
  });
});
