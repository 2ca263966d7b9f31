import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { median, nowMs } from './timing.js';
import type { BenchContext, BenchSection, BenchSuite } from './types.js';

/** The compiled bin, as `npm install` would run it (built by `npm run build`). */
const BIN = fileURLToPath(new URL('../../dist/src/bin/compactor.js', import.meta.url));

/** What `compactor --version` and `--help` may cost: at most this many times a bare `node -e 0`. */
export const STARTUP_RATIO_GOAL = 4;

interface Probe {
  label: string;
  args: string[];
}

const PROBES: Probe[] = [
  { label: 'node -e 0 (baseline)', args: ['-e', '0'] },
  { label: 'compactor --version', args: [BIN, '--version'] },
  { label: 'compactor --help', args: [BIN, '--help'] },
  // Informational: a command's own help loads that command's module and its dependencies.
  { label: 'compactor run --help', args: [BIN, 'run', '--help'] },
];

/** Wall time of one child process, in ms; a failed child aborts the bench (a fast crash is no result). */
function spawnMs(args: string[]): number {
  const t0 = nowMs();
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = nowMs() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${String(r.stderr)}`);
  return ms;
}

/**
 * Start-up time of the compiled CLI against `node -e 0` measured in the same run. Probes
 * are interleaved round by round so a busy machine slows all of them alike.
 */
function startup(ctx: BenchContext): BenchSection {
  const rounds = ctx.quick ? 5 : 21;
  const samples = PROBES.map(() => [] as number[]);
  for (const p of PROBES) spawnMs(p.args); // warm the file cache
  for (let i = 0; i < rounds; i++) PROBES.forEach((p, j) => samples[j].push(spawnMs(p.args)));
  const medians = samples.map(median);
  const base = medians[0];
  return {
    title: 'CLI start-up (compiled bin) vs node -e 0',
    headers: ['command', 'median ms', 'ratio vs node -e 0', `within ${STARTUP_RATIO_GOAL}×`],
    rows: PROBES.map((p, j) => [
      p.label,
      medians[j],
      medians[j] / base,
      j === 0 || j === 3 ? '' : medians[j] / base <= STARTUP_RATIO_GOAL ? 'yes' : 'NO',
    ]),
    notes: [
      `Median of ${rounds} runs each, interleaved; ${process.version}; bin ${BIN}.`,
      '`--version` and `--help` import no command module, tokenizer, provider or machine (goal: ' +
        `≤ ${STARTUP_RATIO_GOAL}× node -e 0); \`run --help\` loads the run command and is shown for comparison.`,
    ],
  };
}

/** CLI start-up suite: needs `npm run build` first (it times the shipped JavaScript, not tsx). */
export const startupSuite: BenchSuite = {
  name: 'startup',
  async run(ctx) {
    if (!existsSync(BIN)) {
      ctx.log(`bench: startup skipped: ${BIN} is missing (run npm run build first)`);
      return [];
    }
    return [startup(ctx)];
  },
};
