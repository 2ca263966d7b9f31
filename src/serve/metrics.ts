import type { Counter, Histogram, Registry } from 'prom-client';
import { loadOptional } from '../core/optional-package.js';

/** The proxy's Prometheus counters, one registry per server (two servers in a process never share counts). */
export interface ServeMetrics {
  registry: Registry;
  requests: Counter<'protocol' | 'outcome'>;
  tokensBefore: Counter<'protocol'>;
  tokensAfter: Counter<'protocol'>;
  compactions: Counter<'protocol'>;
  summaryCalls: Counter<'protocol'>;
  upstreamErrors: Counter<'protocol' | 'status'>;
  /** Whole request, as the client waits for it (streams: until the last event). */
  requestSeconds: Histogram<'protocol'>;
  /** Time the proxy adds before the request leaves for the upstream (reading, projecting, writing). */
  projectionSeconds: Histogram<'protocol'>;
}

/** The Prometheus client loads with the proxy only, so the library installs without it. */
const promClient = () => loadOptional(() => import('prom-client'), 'prom-client', 'compactor serve');

export async function createServeMetrics(): Promise<ServeMetrics> {
  const { Counter, Histogram, Registry } = await promClient();
  const registry = new Registry();
  const registers = [registry];
  const protocol = ['protocol'] as const;
  return {
    registry,
    requests: new Counter({
      name: 'compactor_requests_total',
      help: 'Requests served, by protocol (anthropic, openai-chat, openai-responses, other) and outcome',
      labelNames: ['protocol', 'outcome'],
      registers,
    }),
    tokensBefore: new Counter({
      name: 'compactor_tokens_before_total',
      help: 'Estimated prompt tokens of the requests as the clients sent them',
      labelNames: protocol,
      registers,
    }),
    tokensAfter: new Counter({
      name: 'compactor_tokens_after_total',
      help: 'Estimated prompt tokens of the requests as forwarded upstream',
      labelNames: protocol,
      registers,
    }),
    compactions: new Counter({
      name: 'compactor_compactions_total',
      help: 'Requests that compacted their session',
      labelNames: protocol,
      registers,
    }),
    summaryCalls: new Counter({
      name: 'compactor_summary_calls_total',
      help: 'Provider requests made to write summaries',
      labelNames: protocol,
      registers,
    }),
    upstreamErrors: new Counter({
      name: 'compactor_upstream_errors_total',
      help: 'Upstream answers with an error status, or no answer at all (status "none")',
      labelNames: ['protocol', 'status'],
      registers,
    }),
    requestSeconds: new Histogram({
      name: 'compactor_request_duration_seconds',
      help: 'Time from a request arriving to its response ending',
      labelNames: protocol,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    }),
    projectionSeconds: new Histogram({
      name: 'compactor_projection_duration_seconds',
      help: 'Time spent before forwarding: reading the request, syncing its session, projecting it',
      labelNames: protocol,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
  };
}
