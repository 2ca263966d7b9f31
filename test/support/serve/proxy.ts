import { startServer, type RunningServer, type ServeOptions } from '#src/serve/index.js';

/** Session policy with clearing off, so a loop that grows toward the window compacts instead. */
export const COMPACTING_POLICY = { enabled: false, clearWhenPassBuysFewerTurns: 0 };

/**
 * The proxy as the serve tests start it in process: on a free port at `window`, Anthropic and
 * OpenAI traffic both to `upstream` (one fake speaks both), no retries (a fake never fails by
 * chance), and whatever else `options` sets.
 */
export function startProxyTo(
  upstream: { url: string },
  window: number,
  options: ServeOptions = {},
): Promise<RunningServer> {
  return startServer({
    port: 0,
    capacity: window,
    anthropicUpstream: upstream.url,
    openaiUpstream: upstream.url,
    http: { retries: 0 },
    ...options,
  });
}
