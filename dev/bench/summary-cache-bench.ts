import type { FakeUsage } from '../fakes/prompt-cache.js';
import {
  COMPACTING,
  libraryResumedCalls,
  proxiedCalls,
  RESULT_TOKENS,
  restateCalls,
  startRestate,
  WINDOW,
  type CacheProtocol as Protocol,
} from './summary-cache-runs.js';
import type { BenchContext, BenchSection } from './types.js';

/*
 * Summary calls and the provider's prompt cache: one compacting session per protocol, its
 * summaries asked over the last request sent (the default) or over a bounded fork of the
 * history (`compaction.summaryOverLastRequest: false`), against the fake upstream, whose usage
 * reports what a prefix cache like the provider's served. Through `compactor serve` in memory,
 * in the library with every compacting turn resumed from its checkpoint, and through
 * `compactor serve --engine restate`.
 */

/** The summary calls' usage of one session through the proxy in memory. */
function summaryCalls(protocol: Protocol, overLast: boolean, steps: number, hierarchical: boolean) {
  const compaction = { summaryOverLastRequest: overLast };
  return proxiedCalls(protocol, steps, { session: { policy: COMPACTING, compaction, hierarchical } });
}

const share = (calls: readonly FakeUsage[]) => {
  const input = calls.reduce((n, u) => n + u.input, 0);
  return input === 0 ? 0 : calls.reduce((n, u) => n + u.cached, 0) / input;
};

/** One row: where, protocol, summary, then the calls and cached share over the last request and as a fork. */
function row(where: string, protocol: Protocol, summary: string, prefix: FakeUsage[], fork: FakeUsage[]) {
  const lowest = prefix.length > 0 ? Math.min(...prefix.map((u) => u.cached / u.input)) : 0;
  return [where, protocol, summary, prefix.length, share(prefix), lowest, fork.length, share(fork)];
}

const PROTOCOLS = ['anthropic', 'openai-chat'] as const;

/** The cached share of summary calls over the last request sent against bounded forks, per protocol. */
export async function summaryCacheSection(ctx: BenchContext): Promise<BenchSection> {
  const steps = ctx.quick ? 10 : 24;
  const rows: Array<Array<string | number>> = [];
  for (const hierarchical of [false, true])
    for (const protocol of PROTOCOLS) {
      const prefix = await summaryCalls(protocol, true, steps, hierarchical);
      const fork = await summaryCalls(protocol, false, steps, hierarchical);
      const summary = hierarchical ? 'two bands' : 'flat';
      rows.push(row('serve (memory)', protocol, summary, prefix, fork));
      ctx.log(`bench: summary cache on ${protocol} (${summary}) done`);
    }
  let resumedTurns = 0;
  for (const protocol of PROTOCOLS) {
    const prefix = await libraryResumedCalls(protocol, true, steps);
    const fork = await libraryResumedCalls(protocol, false, steps);
    resumedTurns += prefix.resumed + fork.resumed;
    rows.push(row('library, resumed turns', protocol, 'flat', prefix.calls, fork.calls));
    ctx.log(`bench: summary cache of resumed turns on ${protocol} done`);
  }
  const restate = await startRestate();
  if (restate !== null)
    try {
      for (const protocol of PROTOCOLS) {
        const prefix = await restateCalls(restate, protocol, true, steps);
        const fork = await restateCalls(restate, protocol, false, steps);
        rows.push(row('serve on Restate', protocol, 'flat', prefix, fork));
        ctx.log(`bench: summary cache on Restate (${protocol}) done`);
      }
    } finally {
      await restate.dispose();
    }
  return {
    title: 'Summary calls and the prompt cache: over the last request sent against a bounded fork',
    headers: [
      'where',
      'protocol',
      'summary',
      'summary calls (last request)',
      'cached share',
      'lowest call',
      'summary calls (fork)',
      'cached share (fork)',
    ],
    rows,
    notes: [
      'Two bands: both calls (the abstract of the older part, the detail of the newer) are asked over the same last request, each naming its part; the fork column sends each band its own bounded slice.',
      `One session per row and column through compactor serve at a ${WINDOW / 1000}k window: ${steps} read_file steps of ${RESULT_TOKENS}-token results, compacting instead of clearing, summaries by the upstream model.`,
      'The fake upstream caches as the providers do: OpenAI every prompt from 1,024 tokens, hits in 128-token steps; Anthropic only at cache_control breakpoints (the loop asks for one at the end of each request, as agents do), looking back 20 blocks. Cached share = cached input tokens / input tokens of the summary calls, from the usage the upstream reported.',
      'test/serve/serve-summary-cache.test.ts holds every summary call over the last request to at least 95 % on Chat, Responses, Messages and Gemini.',
      `Library, resumed turns: a session in a session directory talking to the fake upstream itself; each turn that compacts is stopped at its first checkpoint (before its summary call) and resumed by a fresh session on the same directory (${resumedTurns} turns resumed over the four runs). The summary then asks over the last request the checkpoint kept.`,
      restate === null
        ? 'Serve on Restate: not run (no Restate install; see .ci/run).'
        : "Serve on Restate: compactor serve --engine restate with one Node 24 worker whose route is the agent's model on the protocol's wire, with its own key; the session object keeps the last request the proxy sent as positions into its history. test/restate/restate-summary-cache.test.ts holds every such call to at least 95 % on Messages and Chat.",
    ],
  };
}
