import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { startAgentUpstream, stepCallId, stepThought } from '../fakes/agent-upstream.js';
import { chatAnswer } from '../fakes/agent-wire.js';
import { listenLocal } from '../fakes/fake-http.js';
import { loopScript } from '../clients/tool-loop.js';

/*
 * The fake model of the load cells in a thread of its own. On the loop that also times the
 * requests, its parsing of every body every path sends it (at 200k tokens and 50 sessions,
 * hundreds of 838 KiB bodies a second) queued in front of every path's answer, direct included.
 *
 * By default it does not parse the bodies either: every request of a cell gets the same answer
 * (the bench's call ids never name a step of the script, so the full fake answers each with
 * the first step's call), and parsing 50 bodies of up to 900 KB at once queued every path's
 * answer behind the others' parses: direct's own p99 was 5 to 13 times its p50. It reads every
 * byte, checks the body is one JSON object with messages, and finds `"stream":true` in the
 * bytes (quotes inside a JSON string are escaped, so a tool result cannot hold it).
 */

export interface UpstreamThread {
  url: string;
  close: () => Promise<void>;
}

/** The fake's answer to every request: the loop's first tool call, in the wire shape asked for. */
const REPLY = {
  text: stepThought(0),
  call: {
    id: stepCallId('openai-chat', 0),
    name: 'read_file',
    arguments: JSON.stringify({ path: 'file-0.txt' }),
  },
};
const STREAMS = Buffer.from('"stream":true');
const MESSAGES = Buffer.from('"messages":[');

/** Whether `needle` is in the chunks, one split between two chunks included. */
function holds(chunks: readonly Buffer[], needle: Buffer): boolean {
  const edge = needle.length - 1;
  return chunks.some(
    (c, i) =>
      c.includes(needle) ||
      (i > 0 && Buffer.concat([chunks[i - 1]!.subarray(-edge), c.subarray(0, edge)]).includes(needle)),
  );
}

/** Starts the fake that answers Chat Completions without parsing the bodies (see above). */
async function startUnparsingUpstream(model: string): Promise<{ url: string; close: () => Promise<void> }> {
  let served = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const first = chunks[0]?.at(0);
      const last = chunks.at(-1)?.at(-1);
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return res.writeHead(404).end();
      if (first !== 0x7b || last !== 0x7d || !holds(chunks, MESSAGES))
        return res.writeHead(400).end('{"error":{"message":"not a Chat Completions body"}}');
      const stream = holds(chunks, STREAMS);
      chatAnswer({ model, ...(stream ? { stream } : {}) }, { key: `t${served++}`, ...REPLY }, res, 1_000);
    });
  });
  return listenLocal(server);
}

/**
 * Starts the fake model (Chat Completions, usage not counted) in a worker; `parses`: the full
 * fake, a loop of `steps` reads, that parses every body (how the bench ran before, to compare).
 */
export async function startUpstreamThread(
  steps: number,
  model: string,
  parses = false,
): Promise<UpstreamThread> {
  // The worker runs this file as the bench runs, through tsx (registered in the worker first).
  const load = `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(load, { eval: true, workerData: { fakeUpstream: { steps, model, parses } } });
  const [url] = (await once(worker, 'message')) as [string];
  return {
    url,
    close: async () => {
      const exited = once(worker, 'exit');
      worker.postMessage('close');
      await exited;
    },
  };
}

if (!isMainThread && (workerData as { fakeUpstream?: unknown })?.fakeUpstream !== undefined) {
  const { steps, model, parses } = (
    workerData as { fakeUpstream: { steps: number; model: string; parses: boolean } }
  ).fakeUpstream;
  const upstream = parses
    ? await startAgentUpstream({
        window: 'unchecked-overflow-test', // passthrough sends whole histories; no window to hold them to
        script: loopScript(steps),
        countUsage: false,
        keep: false,
      })
    : await startUnparsingUpstream(model);
  parentPort!.once('message', () => {
    void upstream.close().then(() => parentPort!.close());
  });
  parentPort!.postMessage(upstream.url);
}
