import { afterAll, beforeAll, expect } from '@jest/globals';
import { TASK } from '#dev/loops/loop-matrix.js';
import { startFakeAgentUpstream, FINAL_TEXT, type FakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import { RestateServer, startWorker, type RestateInstall, type Worker } from '#dev/restate/harness.js';
import { runClientLoop, type ServeProtocol } from '#support/serve-client-loops.js';

/** A Worker's route for the agent's own model, on the wire of each protocol. */
export const AGENT_ROUTES: Record<ServeProtocol, { provider: string; model: string }> = {
  anthropic: { provider: 'anthropic', model: 'claude-sonnet-4-6' },
  'openai-chat': { provider: 'openai-compatible', model: 'gpt-4o' },
  'openai-responses': { provider: 'openai', model: 'gpt-4o' },
};

/**
 * A real Restate server and a header-steered fake upstream at `window` for the whole file,
 * started before its tests and stopped after them.
 */
export function restateAndAgentUpstream(install: RestateInstall | null, window: number) {
  const started = {} as { restate: RestateServer; upstream: FakeAgentUpstream };
  beforeAll(async () => {
    started.upstream = await startFakeAgentUpstream({ window });
    started.restate = new RestateServer(install!);
    await started.restate.start();
  });
  afterAll(async () => {
    await started.restate?.dispose();
    await started.upstream?.close();
  });
  return started;
}

/**
 * An agent loop of `steps` file reads through the proxy at `proxy`, named `loop` (also its
 * session header), caching each request as agents do; it must reach the final answer.
 */
export async function cachingAgentLoop(options: {
  protocol: ServeProtocol;
  proxy: string;
  loop: string;
  steps: number;
  resultTokens: number;
  apiKey: string;
}): Promise<void> {
  const result = await runClientLoop({
    ...options,
    stream: false,
    task: TASK,
    model: AGENT_ROUTES[options.protocol].model,
    maxTokens: 1_024,
    identify: 'header',
    cacheControl: true,
  });
  expect(result.finalText).toBe(FINAL_TEXT);
}

/**
 * A Node 24 worker whose route is the agent's own model on `protocol`'s wire at `upstream`, with
 * its own `key` and `session` options over its own, registered as the deployment new calls go to.
 */
export async function agentWorker(
  install: RestateInstall,
  started: { restate: RestateServer; upstream: FakeAgentUpstream },
  options: { protocol: ServeProtocol; window: number; key: string; session?: object },
): Promise<Worker> {
  const route = { ...AGENT_ROUTES[options.protocol], baseUrl: started.upstream.url, apiKeyEnv: 'FAKE_KEY' };
  const worker = await startWorker(install, {
    WORKER_ROUTE: JSON.stringify(route),
    WORKER_CAPACITY: String(options.window),
    WORKER_SESSION: JSON.stringify(options.session ?? {}),
    FAKE_KEY: options.key,
  });
  await started.restate.register(`http://127.0.0.1:${worker.port}`);
  return worker;
}
