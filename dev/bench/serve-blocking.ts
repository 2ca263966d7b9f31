import { Agent, request } from 'undici';
import type { AgentUpstream } from '../fakes/agent-upstream.js';
import { sourceText } from '../loops/source-text.js';
import { percentile, startChild, stopChild } from './serve-latency.js';
import { median, nowMs } from './timing.js';
import type { BenchContext, BenchSection } from './types.js';

/*
 * One large request against the small requests of other sessions: small requests one after
 * another through the proxy alone, then while a request of several MB (a new session whose
 * history is all new text) is being worked on. A proxy that tokenizes the large body in one go
 * holds every small request for as long.
 */

const MODEL = 'gpt-4.1';
// A window that holds the large history: what is measured is its counting, not a summary.
const CAPACITY = 100_000_000;

const client = new Agent({ keepAliveTimeout: 1_000, connections: 8 });

/** A Chat Completions request of a new session whose history is `bytes` of distinct file reads. */
export function largeBody(bytes: number): string {
  const source = sourceText();
  const messages: unknown[] = [{ role: 'user', content: 'Read the whole repository.' }];
  for (let i = 0, n = 0; n < bytes; i++) {
    const content = `${source.read(i, 2_000)}\n// read ${i}`;
    n += content.length;
    const id = `call_large_${i}`;
    messages.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: `{"n":${i}}` } }],
      },
      { role: 'tool', tool_call_id: id, content },
    );
  }
  return JSON.stringify({ model: MODEL, messages, max_tokens: 1_000 });
}

const smallBody = (n: number) =>
  JSON.stringify({
    model: MODEL,
    messages: [{ role: 'user', content: `Small question ${n}.` }],
    max_tokens: 100,
  });

async function send(url: string, session: string, text: string): Promise<number> {
  const t0 = nowMs();
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer test',
      'x-compactor-session': session,
    },
    body: text,
    dispatcher: client,
  });
  await res.body.arrayBuffer();
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
  return nowMs() - t0;
}

const round = (n: number) => Math.round(n * 10) / 10;

/** Small-request latency alone and beside one large request, through the proxy in memory. */
export async function blockingSection(ctx: BenchContext, upstream: AgentUpstream): Promise<BenchSection> {
  const mib = ctx.quick ? 2 : 10;
  const proxy = await startChild(
    [
      ...['--import', 'tsx', 'src/bin/compactor.ts', 'serve', '--port', '0'],
      ...[
        '--openai-upstream',
        upstream.url,
        '--capacity',
        String(CAPACITY),
        '--max-body-bytes',
        String(64 << 20),
      ],
    ],
    /serving on (http:\/\/\S+)/,
  );
  const url = proxy.match[1]!;
  const rows: Array<Array<string | number>> = [];
  try {
    let n = 0;
    const alone: number[] = [];
    for (let i = 0; i < (ctx.quick ? 5 : 30); i++) alone.push(await send(url, 'small', smallBody(n++)));
    const large = largeBody(mib << 20);
    let done = false;
    const largeMs = send(url, 'large', large).finally(() => (done = true));
    const beside: number[] = [];
    while (!done) beside.push(await send(url, 'small', smallBody(n++)));
    const took = await largeMs;
    upstream.turns.length = 0;
    upstream.requests.length = 0;
    for (const [when, times] of [
      ['alone', alone],
      [`beside one ${mib} MiB request`, beside],
    ] as const)
      rows.push([
        when,
        times.length,
        round(median(times)),
        round(percentile(times, 99)),
        round(Math.max(...times)),
        round(percentile(times, 50) / percentile(alone, 50)),
        round(percentile(times, 99) / percentile(alone, 99)),
      ]);
    ctx.log(
      `bench: serve large request: ${rows.map((r) => r.join(' ')).join('; ')}; large ${round(took)} ms`,
    );
    return {
      title: `compactor serve: small requests of one session beside a ${mib} MiB request of another`,
      headers: ['small requests', 'count', 'p50 ms', 'p99 ms', 'max ms', 'p50 / alone', 'p99 / alone'],
      rows,
      notes: [
        `Small Chat Completions requests one after another, alone, then for as long as one request of ${mib} MiB (a new session, all of its text new) took: ${round(took)} ms. The proxy in memory, --capacity ${CAPACITY} (nothing compacts).`,
        'The large body is depth-checked, parsed and its tokens counted a slice at a time, with the small requests served between the slices; reading its entries into messages and hashing them still run in one go.',
      ],
    };
  } finally {
    await stopChild(proxy.child);
  }
}
