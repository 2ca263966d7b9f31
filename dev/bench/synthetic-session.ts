import type { Message } from '../../src/messages/message.js';
import { msg } from '../../src/messages/message.js';

/** Small deterministic PRNG (mulberry32) so generated sessions are identical across runs. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Words identifiers are built from (shared with the synthetic agent sessions). */
export const WORDS = [
  'session',
  'budget',
  'request',
  'history',
  'tool',
  'result',
  'parser',
  'config',
  'handler',
  'token',
  'window',
  'summary',
  'stream',
  'buffer',
  'schema',
  'router',
  'client',
  'server',
  'cache',
  'index',
];

function ident(rand: () => number): string {
  const a = WORDS[Math.floor(rand() * WORDS.length)];
  const b = WORDS[Math.floor(rand() * WORDS.length)];
  return `${a}${b[0].toUpperCase()}${b.slice(1)}${Math.floor(rand() * 1000)}`;
}

/** Code-like text of roughly `lines` lines (tool outputs: file reads, greps, test logs). */
function codeText(rand: () => number, lines: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const kind = rand();
    if (kind < 0.5)
      out.push(`  const ${ident(rand)} = ${ident(rand)}(${ident(rand)}, ${Math.floor(rand() * 4096)});`);
    else if (kind < 0.7)
      out.push(
        `src/${ident(rand)}.ts:${Math.floor(rand() * 900)}:  if (${ident(rand)} > ${ident(rand)}) return;`,
      );
    else if (kind < 0.85)
      out.push(`// ${ident(rand)} keeps the ${ident(rand)} within its ${ident(rand)} budget`);
    else out.push(`PASS test/${ident(rand)}.test.ts (${(rand() * 3).toFixed(2)} s)`);
  }
  return out.join('\n');
}

/**
 * A synthetic agent session of exactly `count` messages: a system prompt, a task, then
 * tool batches (1–3 parallel calls, results of 5–175 lines) with occasional assistant
 * prose and user follow-ups. About 500 tokens per message on average.
 */
export function syntheticSession(count: number, seed = 42): Message[] {
  const rand = prng(seed);
  const out: Message[] = [
    msg.system('You are a coding agent. Use tools to inspect and change the repository.'),
    msg.user('Fix the failing budget tests in the session module and keep the public API unchanged.'),
  ];
  let callId = 0;
  while (out.length < count) {
    const r = rand();
    if (r < 0.05) {
      out.push(msg.user(`Also check ${ident(rand)} — do not touch ${ident(rand)}.`));
      continue;
    }
    if (r < 0.12) {
      out.push(msg.assistant(`Next I will look at ${ident(rand)} because ${codeText(rand, 2)}`));
      continue;
    }
    const calls = 1 + Math.floor(rand() * 3);
    const room = count - out.length - 1;
    if (room < 1) {
      out.push(msg.assistant('Done.'));
      break;
    }
    const n = Math.min(calls, room);
    const toolCalls = Array.from({ length: n }, () => {
      const name = ['read_file', 'grep', 'run_tests'][Math.floor(rand() * 3)];
      return { id: `call_${++callId}`, name, arguments: JSON.stringify({ path: `src/${ident(rand)}.ts` }) };
    });
    out.push(msg.assistant('', toolCalls));
    for (const c of toolCalls) {
      const lines = 5 + Math.floor(rand() * rand() * 170);
      out.push(msg.tool(c.id, codeText(rand, lines), c.name));
    }
  }
  return out.slice(0, count);
}
