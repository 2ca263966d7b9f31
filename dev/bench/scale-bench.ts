import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { writeBigToolResult, writeLongSession } from './scale-files.js';
import { nowMs } from './timing.js';
import type { BenchContext, BenchSection, BenchSuite } from './types.js';

/** The compiled bin, as `npm install` would run it (built by `npm run build`). */
const BIN = fileURLToPath(new URL('../../dist/src/bin/compactor.js', import.meta.url));
const USAGE = fileURLToPath(new URL('./child-usage.mjs', import.meta.url));

/** The scale goal: a 100,000-message `run` below this peak RSS (MB) … */
export const RUN_RSS_GOAL_MB = 500;
/** … and a 50 MB tool result through `run` in under this many seconds. */
export const BIG_RESULT_GOAL_S = 10;

const UsageSchema = z.object({ maxRssKb: z.number(), userUs: z.number(), systemUs: z.number() });

interface ChildUsage {
  wallS: number;
  cpuS: number;
  peakRssMb: number;
}

/** Runs `node ARGS` with the usage preload and returns its own wall, CPU and peak RSS. */
function measureChild(args: string[], dir: string): ChildUsage {
  const usageFile = join(dir, 'usage.json');
  rmSync(usageFile, { force: true });
  const t0 = nowMs();
  const r = spawnSync(process.execPath, ['--import', USAGE, ...args], {
    env: { ...process.env, COMPACTOR_BENCH_USAGE: usageFile },
    stdio: ['ignore', 'ignore', 'pipe'],
    maxBuffer: 16 * 1024 * 1024,
  });
  const wallS = (nowMs() - t0) / 1000;
  if (r.status !== 0)
    throw new Error(`node ${args.join(' ')} exited ${r.status}: ${String(r.stderr).slice(-2000)}`);
  const u = UsageSchema.parse(JSON.parse(readFileSync(usageFile, 'utf8')));
  return { wallS, cpuS: (u.userUs + u.systemUs) / 1e6, peakRssMb: u.maxRssKb / 1024 };
}

/** The baseline: a bare Node process that reads and JSON.parses the same file. */
function parseBaseline(file: string, dir: string): ChildUsage {
  return measureChild(['-e', "JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'))", file], dir);
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`;
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');

function row(
  name: string,
  file: string,
  run: ChildUsage,
  base: ChildUsage,
  goal: string,
): Array<string | number> {
  return [
    name,
    mb(statSync(file).size),
    run.wallS.toFixed(1),
    run.cpuS.toFixed(1),
    run.peakRssMb.toFixed(0),
    base.cpuS.toFixed(1),
    base.peakRssMb.toFixed(0),
    (run.peakRssMb / base.peakRssMb).toFixed(2),
    (run.cpuS / base.cpuS).toFixed(1),
    goal,
  ];
}

/**
 * `compactor run` (offline, the defaults) on a long synthetic session and on one huge tool
 * result, each in its own child process, against JSON.parse of the same file in the same run.
 */
function scale(ctx: BenchContext): BenchSection {
  const messages = ctx.quick ? 10_000 : 100_000;
  const bytes = ctx.quick ? 5_000_000 : 50_000_000;
  const dir = mkdtempSync(join(tmpdir(), 'compactor-scale-'));
  const loadBefore = load();
  try {
    const long = join(dir, 'long.json');
    const big = join(dir, 'big-result.json');
    ctx.log(`bench: scale, writing ${messages} messages and a ${bytes / 1e6} MB tool result…`);
    writeLongSession(long, messages);
    writeBigToolResult(big, bytes);
    const rows: Array<Array<string | number>> = [];
    ctx.log('bench: scale, run on the long session…');
    const longRun = measureChild([BIN, 'run', long], dir);
    rows.push(
      row(
        `${messages.toLocaleString('en-US')} messages`,
        long,
        longRun,
        parseBaseline(long, dir),
        `peak RSS < ${RUN_RSS_GOAL_MB} MB: ${longRun.peakRssMb < RUN_RSS_GOAL_MB ? 'met' : 'MISSED'}`,
      ),
    );
    ctx.log('bench: scale, run on the huge tool result…');
    const bigRun = measureChild([BIN, 'run', big], dir);
    rows.push(
      row(
        `one ${bytes / 1e6} MB tool result`,
        big,
        bigRun,
        parseBaseline(big, dir),
        `< ${BIG_RESULT_GOAL_S} s: ${bigRun.wallS < BIG_RESULT_GOAL_S ? 'met' : 'MISSED'} (wall), ${bigRun.cpuS < BIG_RESULT_GOAL_S ? 'met' : 'MISSED'} (CPU)`,
      ),
    );
    return {
      title: 'compactor run at scale: a long session and one huge tool result (offline defaults)',
      headers: [
        'input',
        'file',
        'run wall s',
        'run CPU s',
        'run peak RSS MB',
        'JSON.parse CPU s',
        'JSON.parse peak RSS MB',
        'RSS × JSON.parse',
        'CPU × JSON.parse',
        'goal',
      ],
      rows,
      notes: [
        'Each run is its own child process of the compiled CLI; CPU = user + system time and peak RSS = maxRSS of that process (a preload reports them at exit). Baseline: a bare Node process reading and JSON.parsing the same file, measured in the same run. Large JSON files are read in pieces (their text is never held whole), so a run can stay below the bare parse.',
        `Synthetic inputs (dev/bench/scale-files.ts): the long session is syntheticSession as an OpenAI chat document; the huge result is one tool message of log lines. Load average (1/5/15 min) before: ${loadBefore}, after: ${load()}; wall time depends on load, CPU time much less.`,
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Memory and time of `compactor run` at scale. */
export const scaleSuite: BenchSuite = {
  name: 'scale',
  run(ctx) {
    return Promise.resolve([scale(ctx)]);
  },
};
