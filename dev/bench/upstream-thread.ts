import { once } from 'node:events';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { startAgentUpstream } from '../fakes/agent-upstream.js';
import { loopScript } from '../clients/tool-loop.js';

/*
 * The fake model of the load cells in a thread of its own. It reads and parses every body that
 * every path sends it (at 200k tokens and 50 sessions, hundreds of 838 KiB bodies a second); on
 * the loop that also times the requests, that work queued in front of every path's answer,
 * direct included, and the bench measured itself.
 */

export interface UpstreamThread {
  url: string;
  close: () => Promise<void>;
}

/** Starts the fake model (Chat Completions, a loop of `steps` reads, usage not counted) in a worker. */
export async function startUpstreamThread(steps: number): Promise<UpstreamThread> {
  // The worker runs this file as the bench runs, through tsx (registered in the worker first).
  const load = `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(load, { eval: true, workerData: { fakeUpstream: { steps } } });
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
  const { steps } = (workerData as { fakeUpstream: { steps: number } }).fakeUpstream;
  const upstream = await startAgentUpstream({
    window: 'unchecked-overflow-test', // passthrough sends whole histories; no window to hold them to
    script: loopScript(steps),
    countUsage: false,
    keep: false,
  });
  parentPort!.once('message', () => {
    void upstream.close().then(() => parentPort!.close());
  });
  parentPort!.postMessage(upstream.url);
}
