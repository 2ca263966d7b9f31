import { resolve } from 'node:path';

/*
 * CPU of a turn that changes nothing (below the threshold, 61 messages), through
 * createTurnRunner, for this checkout and others in interleaved rounds:
 * `npx tsx dev/bench/turn-cpu-probe.ts [OTHER_CHECKOUT…] [turns per round]`.
 * Such a turn is mostly the turn machine's own work (XState's actors, steps and context
 * copies), so this shows what a change to the machine or its runner costs per request.
 * With `node --cpu-prof --import tsx` the profile tells each checkout's XState apart by path.
 */
const args = process.argv.slice(2);
const last = args.at(-1);
const turns = last !== undefined && /^\d+$/.test(last) ? Number(args.pop()) : 2_000;
const roots = [resolve('.'), ...args.map((a) => resolve(a))];
const ROUNDS = 12;
const WARM = 2; // rounds not counted

interface Checkout {
  root: string;
  run: () => Promise<void>;
  microsPerTurn: number[];
}

/** A runner of `root`'s src and a turn to run on it again and again. */
async function checkout(root: string): Promise<Checkout> {
  const rt = (await import(`${root}/src/runtime/index.ts`)) as typeof import('../../src/runtime/index.js');
  const { msg } = (await import(
    `${root}/src/messages/message.ts`
  )) as typeof import('../../src/messages/message.js');
  const { charsCounter } = (await import(
    `${root}/src/estimate/counters.ts`
  )) as typeof import('../../src/estimate/counters.js');
  const { createEstimator } = (await import(
    `${root}/src/estimate/estimator.ts`
  )) as typeof import('../../src/estimate/estimator.js');
  const history = [msg.system('You are a coding agent.')];
  for (let i = 0; i < 20; i++)
    history.push(
      msg.user(`Step ${i}: look at it`),
      msg.assistant('', [{ id: `call_${i}`, name: 'read_file', arguments: '{"path":"a"}' }]),
      msg.tool(`call_${i}`, `export const v${i} = 1;`, 'read_file'),
    );
  const runner = rt.createTurnRunner({
    estimator: createEstimator({ counter: charsCounter }),
    config: rt.resolveRunConfig({ limits: { capacity: 200_000, reservedOutput: 2_000 } }),
    compaction: {
      summarizer: { prepare: () => Promise.reject(new Error('no summary in this probe')) } as never,
    },
  });
  let n = 0;
  let carry = {};
  const run = async () => {
    const r = await runner.runTurn({ turnId: `t${n++}`, history, ...carry });
    if (r.decision !== 'below-threshold') throw new Error(`the probe's turn ended ${r.decision}`);
    carry = { lastSent: r.lastSent, cacheCycle: r.cacheCycle, loopGuard: r.loopGuard };
  };
  return { root, run, microsPerTurn: [] };
}

const checkouts: Checkout[] = [];
for (const root of roots) checkouts.push(await checkout(root));
for (let round = 0; round < ROUNDS; round++) {
  // Each round in the other order, so neither checkout always runs first.
  for (const c of round % 2 ? [...checkouts].reverse() : checkouts) {
    const start = process.cpuUsage();
    for (let i = 0; i < turns; i++) await c.run();
    const used = process.cpuUsage(start);
    if (round >= WARM) c.microsPerTurn.push((used.user + used.system) / turns);
  }
}
for (const c of checkouts) {
  const sorted = [...c.microsPerTurn].sort((a, b) => a - b);
  const median = sorted[sorted.length >> 1]!;
  console.log(`${c.root}: median ${median.toFixed(1)} µs CPU per turn (min ${sorted[0]!.toFixed(1)})`);
}
