import { trimMessages, type BaseMessage } from '@langchain/core/messages';
import { pruneMessages } from 'ai';
import { ClearToolUsesEdit } from 'langchain';
import { toModelMessages } from '../../src/adapters/ai-sdk/index.js';
import { createEstimator, type Estimator } from '../../src/estimate/estimator.js';
import type { Message } from '../../src/messages/message.js';
import { projectRequest } from '../../src/projection/project-request.js';
import { AI_SDK_PRUNE_OPTIONS } from '../replay/policies/ai-sdk-prune.js';
import { createLangChainBridge } from '../replay/policies/langchain-convert.js';
import { syntheticSession } from './synthetic-session.js';
import { median, nowMs } from './timing.js';
import type { BenchContext, BenchSuite } from './types.js';

/** The goal: Compactor's warm per-turn cost at 10k messages ≤ this × the fastest peer's. */
export const PEER_RATIO_TARGET = 2;

/** A token counter for LangChain messages, cached per message object like Compactor's estimator. */
function langchainCounter(est: Estimator): (messages: BaseMessage[]) => number {
  const cache = new WeakMap<BaseMessage, number>();
  return (messages) => {
    let n = 0;
    for (const m of messages) {
      let t = cache.get(m);
      if (t === undefined)
        cache.set(m, (t = est.text(typeof m.content === 'string' ? m.content : JSON.stringify(m.content))));
      n += t;
    }
    return n;
  };
}

type Projector = (turnEnd: number) => unknown;

/** A library timed per turn; `compactor` marks Compactor's own rows (the others are the peers). */
interface Contender {
  name: string;
  compactor?: boolean;
  project: Projector;
}

/**
 * Each contender projects the history up to a turn in its own message format (all converted
 * up front, not timed), from its own copy of the session with its own token counter, so no
 * contender's caches warm another's.
 */
function contenders(session: readonly Message[]): Contender[] {
  const limits = { capacity: 200_000, reservedOutput: 8_000 };
  // Two Compactor configurations: each its own message objects (its caches are per message) and estimator.
  const defaults = { history: session, estimator: createEstimator() };
  const vtcode = { history: session.map((m) => ({ ...m })), estimator: createEstimator() };
  // The package's own converters (context-compactor/ai-sdk, /langchain): no second copy.
  const model = toModelMessages(session);
  const lcEstimator = createEstimator();
  const lc = createLangChainBridge(lcEstimator).toLangChain(session);
  const count = langchainCounter(lcEstimator);
  const edit = new ClearToolUsesEdit();
  const noModel = undefined as unknown as Parameters<ClearToolUsesEdit['apply']>[0]['model'];
  return [
    {
      name: 'Compactor projectRequest, defaults (preset compactor)',
      compactor: true,
      project: (n) => projectRequest(defaults.history.slice(0, n), { limits, estimator: defaults.estimator }),
    },
    {
      name: 'Compactor projectRequest, preset vtcode (clearing on)',
      compactor: true,
      project: (n) =>
        projectRequest(vtcode.history.slice(0, n), {
          limits,
          estimator: vtcode.estimator,
          policy: { preset: 'vtcode' },
        }),
    },
    {
      name: 'AI SDK pruneMessages (ai)',
      project: (n) => pruneMessages({ messages: model.slice(0, n), ...AI_SDK_PRUNE_OPTIONS }),
    },
    {
      name: 'LangChain trimMessages (@langchain/core), 40k tokens',
      project: (n) =>
        trimMessages(lc.slice(0, n), {
          maxTokens: 40_000,
          strategy: 'last',
          includeSystem: true,
          startOn: ['human', 'ai'],
          tokenCounter: count,
        }),
    },
    {
      name: 'LangChain ClearToolUsesEdit (langchain), defaults',
      project: (n) => edit.apply({ messages: lc.slice(0, n), model: noModel, countTokens: count }),
    },
  ];
}

/** A contender stops being sampled once it has this many warm turns and has used this much time (slow peers). */
const MIN_WARM_SAMPLES = 3;
const TIME_BUDGET_MS = 15_000;

/**
 * Cold (first call) and warm (median of later turns) per-turn ms of every contender on the
 * same turns. Turns are interleaved (each turn runs every contender) so load from other
 * processes hits all of them alike.
 */
async function measure(
  session: readonly Message[],
  turns: number,
): Promise<Array<{ name: string; compactor: boolean; coldMs: number; warmMs: number; samples: number }>> {
  const ends: number[] = [];
  for (let i = session.length - 1; i > 0 && ends.length < turns + 1; i--)
    if (session[i].role === 'assistant') ends.unshift(i);
  const all = contenders(session);
  const times = all.map((): number[] => []);
  const spent = all.map(() => 0);
  for (const end of ends)
    for (let c = 0; c < all.length; c++) {
      if (times[c].length > MIN_WARM_SAMPLES && spent[c] > TIME_BUDGET_MS) continue;
      const t0 = nowMs();
      await all[c].project(end);
      const ms = nowMs() - t0;
      // The cold turn (first estimates, first conversion) does not count against the budget:
      // a contender with a slow start and cheap turns still gets its full set of warm turns.
      if (times[c].length > 0) spent[c] += ms;
      times[c].push(ms);
    }
  return all.map((c, i) => ({
    name: c.name,
    compactor: c.compactor === true,
    coldMs: times[i][0],
    warmMs: median(times[i].slice(1)),
    samples: times[i].length - 1,
  }));
}

/** Per-turn projection speed of Compactor beside the peers' real libraries, same sessions, same run. */
export const peerSpeedSuite: BenchSuite = {
  name: 'speed',
  async run(ctx: BenchContext) {
    const sizes = ctx.quick ? [1_000] : [1_000, 10_000];
    const turns = ctx.quick ? 5 : 21;
    const rows: Array<Array<string | number>> = [];
    const notes: string[] = [];
    for (const size of sizes) {
      ctx.log(`bench: peer speed, ${size} messages…`);
      const results = await measure(syntheticSession(size), turns);
      const fastestPeer = results.filter((r) => !r.compactor).reduce((a, b) => (b.warmMs < a.warmMs ? b : a));
      for (const r of results)
        rows.push([size, r.name, r.coldMs, r.warmMs, r.samples, r.warmMs / fastestPeer.warmMs]);
      for (const c of results.filter((r) => r.compactor)) {
        const ratio = c.warmMs / fastestPeer.warmMs;
        const goal =
          size === 10_000
            ? ` (goal ≤ ${PEER_RATIO_TARGET}: ${ratio <= PEER_RATIO_TARGET ? 'met' : 'MISSED'})`
            : '';
        notes.push(
          `${size.toLocaleString('en-US')} messages: ${c.name} warm ${c.warmMs.toFixed(2)} ms/turn vs fastest peer (${fastestPeer.name}) ${fastestPeer.warmMs.toFixed(2)} ms/turn: ratio ${ratio.toFixed(2)}${goal}.`,
        );
      }
    }
    notes.push(
      'Same synthetic session (syntheticSession, ~530 tokens/message), same turns (the last assistant messages), same process, turns interleaved across libraries; a library whose warm turns are slow stops after 3 of them once they have used 15 s (the cold turn does not count). Each library gets its own copy of the history, already in its own message format (conversion not timed for any of them), and its own token counter, cached per message for every contender. The turns are consecutive turns of one session, so what Compactor remembers per session (token counts per message, the call/result pairing pass, resumed where the last turn stopped) carries over from turn to turn as in real use; the peers’ functions keep nothing between calls. Compactor normalizes pairing and measures every message (defaults: tool results kept until compaction); with preset vtcode it also applies the evidence window and count rules of clearing; pruneMessages only drops old tool parts; trimMessages only cuts to a token budget; ClearToolUsesEdit replaces old results.',
    );
    return [
      {
        title: 'Per-turn projection speed beside the peers (warm = median over turns)',
        headers: ['messages', 'library', 'cold ms', 'warm ms/turn', 'warm turns', '× fastest peer'],
        rows,
        notes,
      },
    ];
  },
};
