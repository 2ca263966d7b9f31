import { Agent, request } from 'undici';
import { startAgentUpstream } from '../fakes/agent-upstream.js';
import { startGeminiUpstream } from '../fakes/gemini-upstream.js';
import { loopScript } from '../clients/tool-loop.js';
import { sourceText } from '../loops/source-text.js';
import { processCpuMs, serveFromCheckout, stopChild } from './serve-latency.js';
import { median } from './timing.js';

/*
 * CPU a `compactor serve` process spends per request, by protocol and history size, against the
 * parse floor of the same bodies:
 * `npx tsx dev/bench/serve-sizes-profile.ts [PROFILE_DIR|''] [turns] [protocols,...|''] [sizes,...|''] [OTHER_CHECKOUT]`.
 * Each session starts with a history of tool calls and results of about the given size and adds
 * one call and its result per request, as an agent resends its whole history. With a
 * PROFILE_DIR the proxy writes its CPU profile there (open it in Chrome's DevTools); with another
 * checkout, its proxy gets the same bodies in the same run, request for request (a before and after).
 */

type Wire = 'openai-chat' | 'anthropic' | 'openai-responses' | 'gemini';
const [dir = '', turnsArg = '8', protocolsArg = '', sizesArg = '', other] = process.argv.slice(2);
const TURNS = Number(turnsArg);
const RESULT_TOKENS = 2_000;
const WIRES: Wire[] =
  protocolsArg === ''
    ? ['openai-chat', 'anthropic', 'openai-responses', 'gemini']
    : (protocolsArg.split(',') as Wire[]);
const SIZES = sizesArg === '' ? [10_000, 50_000, 100_000, 200_000] : sizesArg.split(',').map(Number);

const source = sourceText();
const reads = Array.from({ length: 16 }, (_, n) => source.read(n, RESULT_TOKENS));
const SYSTEM = 'You are a coding agent. Use read_file to read files.';
const PARAMS = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };

/** The path and body of request `turn` of a session whose history starts at `tokens` tokens. */
function body(wire: Wire, session: string, tokens: number, turn: number): { path: string; text: string } {
  const pairs = Math.round(tokens / RESULT_TOKENS) + turn;
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
      messages.push({ role: 'tool', tool_call_id: id, content: reads[i % reads.length] });
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
        content: [{ type: 'tool_result', tool_use_id: id, content: reads[i % reads.length] }],
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
      input.push({ type: 'function_call_output', call_id: id, output: reads[i % reads.length] });
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
    const response = { output: reads[i % reads.length] };
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
function parseFloor(text: string): number {
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

const script = loopScript(1_000);
const upstream = await startAgentUpstream({ window: 'unchecked-overflow-test', script, countUsage: false });
const gemini = await startGeminiUpstream({
  window: 'unchecked-overflow-test',
  script,
  stepOf: () => undefined,
});
/** `compactor serve` from `checkout`'s src/ against the fake upstreams, with `node` flags before it. */
const serveFrom = async (checkout: string, node: string[] = []) => {
  const args = [
    '--capacity',
    '1000000',
    '--openai-upstream',
    upstream.url,
    '--anthropic-upstream',
    upstream.url,
  ];
  const p = await serveFromCheckout(checkout, [...args, '--gemini-upstream', gemini.baseUrl], node);
  return { name: checkout === '' ? 'this' : 'other', base: p.match[1], child: p.child };
};
const proxies = [await serveFrom('', dir === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`])];
if (other !== undefined) proxies.push(await serveFrom(`${other}/`));
const client = new Agent({ keepAliveTimeout: 1_000 });
const headers = {
  'content-type': 'application/json',
  authorization: 'Bearer test',
  'x-api-key': 'test',
  'x-goog-api-key': 'test',
};

async function send(base: string, path: string, text: string, session: string): Promise<void> {
  const res = await request(`${base}${path}`, {
    method: 'POST',
    headers: { ...headers, 'x-compactor-session': session },
    body: text,
    dispatcher: client,
  });
  const answer = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${answer.slice(0, 300)}`);
}

try {
  // Warms every path of every protocol once.
  for (const p of proxies)
    for (const wire of WIRES) {
      const b = body(wire, `warm-${wire}`, 4_000, 0);
      await send(p.base, b.path, b.text, `warm-${wire}`);
    }
  console.log('proxy  protocol          tokens   cpu ms/req   floor ms   added/floor');
  for (const wire of WIRES)
    for (const size of SIZES) {
      const session = `${wire}-${size}`;
      const first = body(wire, session, size, 0);
      for (const p of proxies) await send(p.base, first.path, first.text, session);
      const bodies = Array.from({ length: TURNS }, (_, t) => body(wire, session, size, t + 1));
      const cpu = proxies.map(() => 0);
      for (const [t, b] of bodies.entries())
        // The order alternates: neither proxy always runs just after the other.
        for (const [i, p] of t % 2 === 0 ? [...proxies.entries()] : [...proxies.entries()].reverse()) {
          const before = processCpuMs(p.child.pid);
          await send(p.base, b.path, b.text, session);
          cpu[i] += processCpuMs(p.child.pid) - before;
        }
      const floor = parseFloor(bodies[0].text);
      for (const [i, p] of proxies.entries())
        console.log(
          p.name.padEnd(6),
          wire.padEnd(17),
          String(size).padStart(6),
          (cpu[i] / TURNS).toFixed(1).padStart(12),
          floor.toFixed(1).padStart(10),
          (cpu[i] / TURNS / floor).toFixed(2).padStart(12),
        );
    }
} finally {
  for (const p of proxies) await stopChild(p.child);
  await upstream.close();
  await gemini.close();
  await client.close();
}
