import { cpuBySize, PROTOCOLS, startSizeProxies, type SizeRow } from './serve-sizes.js';
import type { BenchContext, BenchSection } from './types.js';

/*
 * How the proxy's CPU per request grows with the history, by protocol, against the parse floor:
 * a request should cost its parse and what it adds, so from the smallest history to the largest
 * its CPU should grow about as much as the floor does (1x), not with the proxy's own work on the
 * whole history. One session a protocol, this checkout's proxy on its own.
 */

const round = (n: number) => Math.round(n * 100) / 100;

/** CPU per request at the smallest and largest history, by protocol, and its growth over the floor's. */
export async function growthSection(ctx: BenchContext): Promise<BenchSection> {
  const [small, large] = ctx.quick ? [4_000, 20_000] : [10_000, 200_000];
  const turns = ctx.quick ? 2 : 16;
  const started = await startSizeProxies(['']);
  const cells: SizeRow[] = [];
  try {
    await cpuBySize(started, PROTOCOLS, [small, large], turns, (r) => {
      cells.push(r);
      ctx.log(
        `bench: serve growth: ${r.wire} ${r.tokens}: ${r.cpu.toFixed(1)} ms CPU, floor ${r.floor.toFixed(1)} ms`,
      );
    });
  } finally {
    await started.close();
  }
  const rows = PROTOCOLS.map((wire) => {
    const [a, b] = [small, large].map((tokens) => cells.find((c) => c.wire === wire && c.tokens === tokens)!);
    return [
      wire,
      round(a!.cpu),
      round(b!.cpu),
      round(a!.floor),
      round(b!.floor),
      round((b!.cpu - a!.cpu) / (b!.floor - a!.floor)),
    ];
  });
  return {
    title: `compactor serve: CPU per request from ${small / 1000}k to ${large / 1000}k tokens of history, by protocol, against the parse floor`,
    headers: [
      'protocol',
      `CPU ms ${small / 1000}k`,
      `CPU ms ${large / 1000}k`,
      `floor ms ${small / 1000}k`,
      `floor ms ${large / 1000}k`,
      'growth / floor growth',
    ],
    rows,
    notes: [
      `One session a protocol opens at the history size (not counted) and adds a read_file call and its 2,000-token result per request, ${turns} requests; CPU of the proxy process from /proc (10 ms ticks: about ${(10 / turns).toFixed(1)} ms a request).`,
      'Floor: Buffer to string, JSON.parse, JSON.stringify, string to Buffer of one body, in the bench process. Growth / floor growth: how much the CPU per request grew from the smaller history to the larger over how much the floor grew (1: the request costs its parse and what it adds).',
    ],
  };
}
