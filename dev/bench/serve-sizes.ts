import { Agent, request } from 'undici';
import type { ChildProcess } from 'node:child_process';
import { loopScript } from '../clients/tool-loop.js';
import { startAgentUpstream } from '../fakes/agent-upstream.js';
import { startGeminiUpstream } from '../fakes/gemini-upstream.js';
import { sourceText } from '../loops/source-text.js';
import { processCpuMs, serveFromCheckout, stopChild } from './serve-latency.js';
import { median } from './timing.js';

/*
 * CPU a `compactor serve` process spends per request, by protocol and history size, against the
 * parse floor of the same bodies. Each session starts with a history of read_file calls and their
 * results of about the given size and adds one call and its result per request, as an agent
 * resends its whole history.
 */

export type Wire = 'openai-chat' | 'anthropic' | 'openai-responses' | 'gemini';
export const PROTOCOLS: Wire[] = ['openai-chat', 'anthropic', 'openai-responses', 'gemini'];
const RESULT_TOKENS = 2_000;

// Made on first use: a bench that imports this file and sends none pays nothing.
let reads: string[] | undefined;
function readsOf(): string[] {
  if (reads === undefined) {
    const source = sourceText();
    reads = Array.from({ length: 16 }, (_, n) => source.read(n, RESULT_TOKENS));
  }
  return reads;
}
const SYSTEM = 'You are a coding agent. Use read_file to read files.';
const PARAMS = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };

/** The path and body of request `turn` of a session whose history starts at `tokens` tokens. */
export function protocolBody(
  wire: Wire,
  session: string,
  tokens: number,
  turn: number,
): { path: string; text: string } {
  const pairs = Math.round(tokens / RESULT_TOKENS) + turn;
  const results = readsOf();
  const ask = `Session ${session}: read the files one by one, then summarize them.`;
  const ids = Array.from({ length: pairs }, (_, i) => `call_${session}_${i}`);
  if (wire === 'openai-chat') {
    const messages: unknown[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: ask },
    ];
    ids.forEach((id, i) => {
      const call = { id, type: 'function', function: { name: 'read_file', arguments: `{"path":"f${i}"}` } };
      messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      messages.push({ role: 'tool', tool_call_id: id, content: results[i % results.length] });
    });
    const tools = [
      { type: 'function', function: { name: 'read_file', description: 'Reads a file.', parameters: PARAMS } },
    ];
    return {
      path: '/v1/chat/completions',
      text: JSON.stringify({ model: 'gpt-4.1', messages, tools, max_tokens: 1_000 }),
    };
  }
  if (wire === 'anthropic') {
    const messages: unknown[] = [{ role: 'user', content: ask }];
    ids.forEach((id, i) => {
      messages.push({
        role: 'assistant',
        content: [{ type: 'tool_use', id, name: 'read_file', input: { path: `f${i}` } }],
      });
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: id, content: results[i % results.length] }],
      });
    });
    const tools = [{ name: 'read_file', description: 'Reads a file.', input_schema: PARAMS }];
    const b = { model: 'claude-sonnet-4-5', system: SYSTEM, max_tokens: 1_000, tools, messages };
    return { path: '/v1/messages', text: JSON.stringify(b) };
  }
  if (wire === 'openai-responses') {
    const input: unknown[] = [{ role: 'user', content: ask }];
    ids.forEach((id, i) => {
      input.push({ type: 'function_call', call_id: id, name: 'read_file', arguments: `{"path":"f${i}"}` });
      input.push({ type: 'function_call_output', call_id: id, output: results[i % results.length] });
    });
    const tools = [{ type: 'function', name: 'read_file', description: 'Reads a file.', parameters: PARAMS }];
    const b = { model: 'gpt-4.1', instructions: SYSTEM, input, tools, max_output_tokens: 1_000 };
    return { path: '/v1/responses', text: JSON.stringify(b) };
  }
  const contents: unknown[] = [{ role: 'user', parts: [{ text: ask }] }];
  ids.forEach((_, i) => {
    contents.push({
      role: 'model',
      parts: [{ functionCall: { name: 'read_file', args: { path: `f${i}` } }, thoughtSignature: 'c2ln' }],
    });
    const response = { output: results[i % results.length] };
    contents.push({ role: 'user', parts: [{ functionResponse: { name: 'read_file', response } }] });
  });
  const b = {
    systemInstruction: { parts: [{ text: SYSTEM }] },
    tools: [
      { functionDeclarations: [{ name: 'read_file', description: 'Reads a file.', parameters: PARAMS }] },
    ],
    contents,
    generationConfig: { maxOutputTokens: 1_000 },
  };
  return { path: '/v1beta/models/gemini-2.5-pro:generateContent', text: JSON.stringify(b) };
}

/** Decode, parse, serialize, encode: the least a proxy that reads a body pays (median CPU ms of 15). */
function cpuParseFloor(text: string): number {
  const bytes = Buffer.from(text);
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const before = process.cpuUsage();
    Buffer.from(JSON.stringify(JSON.parse(bytes.toString('utf8'))));
    const spent = process.cpuUsage(before);
    times.push((spent.user + spent.system) / 1_000);
  }
  return median(times);
}

/** A proxy measured: which checkout it runs from, its URL and its process. */
export interface SizeProxy {
  name: string;
  base: string;
  child: ChildProcess;
}

/**
 * `compactor serve` from each checkout's src/ (`''`: this one) against fake upstreams of every
 * protocol; `node` flags go to the first. `close` stops them all.
 */
export async function startSizeProxies(checkouts: string[], node: string[] = []): Promise<SizeProxies> {
  const script = loopScript(1_000);
  const upstream = await startAgentUpstream({ window: 'unchecked-overflow-test', script, countUsage: false });
  const gemini = await startGeminiUpstream({
    window: 'unchecked-overflow-test',
    script,
    stepOf: () => undefined,
  });
  const args = [
    '--capacity',
    '1000000',
    '--openai-upstream',
    upstream.url,
    '--anthropic-upstream',
    upstream.url,
  ];
  const proxies: SizeProxy[] = [];
  const close = async () => {
    for (const p of proxies) await stopChild(p.child);
    await upstream.close();
    await gemini.close();
    await client.close();
  };
  const client = new Agent({ keepAliveTimeout: 1_000 });
  try {
    for (const [i, checkout] of checkouts.entries()) {
      const flags = i === 0 ? node : [];
      const p = await serveFromCheckout(checkout, [...args, '--gemini-upstream', gemini.baseUrl], flags);
      proxies.push({ name: checkout === '' ? 'this' : 'other', base: p.match[1]!, child: p.child });
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { proxies, client, close };
}

/** The proxies started, the client that talks to them, and what stops them all. */
export interface SizeProxies {
  proxies: SizeProxy[];
  client: Agent;
  close(): Promise<void>;
}

const HEADERS = {
  'content-type': 'application/json',
  authorization: 'Bearer test',
  'x-api-key': 'test',
  'x-goog-api-key': 'test',
};

async function send(client: Agent, base: string, path: string, text: string, session: string): Promise<void> {
  const res = await request(`${base}${path}`, {
    method: 'POST',
    headers: { ...HEADERS, 'x-compactor-session': session },
    body: text,
    dispatcher: client,
  });
  const answer = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${answer.slice(0, 300)}`);
}

/** One cell measured: a proxy's CPU ms per request at a protocol and size, beside the parse floor. */
export interface SizeRow {
  proxy: string;
  wire: Wire;
  tokens: number;
  cpu: number;
  floor: number;
}

/**
 * Every protocol at every size: a session opens at the size (not counted), then `turns` requests
 * go to each proxy in turn (the order alternates per request); `row` gets each cell as it ends.
 */
export async function cpuBySize(
  { proxies, client }: SizeProxies,
  wires: readonly Wire[],
  sizes: readonly number[],
  turns: number,
  row: (r: SizeRow) => void,
): Promise<void> {
  // Warms every path of every protocol once.
  for (const p of proxies)
    for (const wire of wires) {
      const b = protocolBody(wire, `warm-${wire}`, 4_000, 0);
      await send(client, p.base, b.path, b.text, `warm-${wire}`);
    }
  for (const wire of wires)
    for (const tokens of sizes) {
      const session = `${wire}-${tokens}`;
      const first = protocolBody(wire, session, tokens, 0);
      for (const p of proxies) await send(client, p.base, first.path, first.text, session);
      const bodies = Array.from({ length: turns }, (_, t) => protocolBody(wire, session, tokens, t + 1));
      const cpu = proxies.map(() => 0);
      for (const [t, b] of bodies.entries())
        // The order alternates: neither proxy always runs just after the other.
        for (const [i, p] of t % 2 === 0 ? [...proxies.entries()] : [...proxies.entries()].reverse()) {
          const before = processCpuMs(p.child.pid);
          await send(client, p.base, b.path, b.text, session);
          cpu[i]! += processCpuMs(p.child.pid) - before;
        }
      const floor = cpuParseFloor(bodies[0]!.text);
      for (const [i, p] of proxies.entries())
        row({ proxy: p.name, wire, tokens, cpu: cpu[i]! / turns, floor });
    }
}
