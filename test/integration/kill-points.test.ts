import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openSessionStore, type ThreadEvent } from '#src/store/index.js';
import { prng } from '#dev/bench/synthetic-session.js';
import { agentSession, canonicalFile, workDir } from '#support/cli-sessions.js';
import { startCli } from '#support/compiled-cli.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

/**
 * SIGKILL at random points of `import`, `run` and `compact` (eight kill points each). The run
 * is cut into as many equal slices as there are kills and each kill lands at a random moment
 * of its own slice, so early, middle and late moments of every command are all hit without
 * dozens of processes. Every kill moment is a valid outcome, so nothing races the clock: a kill that
 * lands after the child finished is simply a completed run, and the loop goes on until each
 * command was killed mid-way often enough. Kill moments are spread over the time an
 * uninterrupted run of the same command took on this machine: measured first, and measured
 * again by every run a kill came too late for. A busy machine speeds up and slows down while
 * the loop runs; a duration measured once would leave most kills landing after the end.
 */

const KILLS_PER_COMMAND = 8;
const dir = workDir('kill');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const session = agentSession(40, 1_200, 600, 10);
canonicalFile(dir, 'session.json', session);

async function timedRun(args: string[]): Promise<number> {
  const start = performance.now();
  const r = await startCli(args, { cwd: dir }).done;
  expect(r.code).toBe(0);
  return performance.now() - start;
}

/**
 * Starts the command and SIGKILLs it after `delayMs`. `killed` is true when the kill landed
 * mid-run; otherwise `ms` is how long the whole run took.
 */
async function killAfter(args: string[], delayMs: number): Promise<{ killed: boolean; ms: number }> {
  const start = performance.now();
  const c = startCli(args, { cwd: dir });
  const timer = setTimeout(() => c.child.kill('SIGKILL'), delayMs);
  const r = await c.done;
  clearTimeout(timer);
  if (r.signal === null) expect(r.code).toBe(0);
  return { killed: r.signal === 'SIGKILL', ms: performance.now() - start };
}

const comparable = (events: readonly ThreadEvent[]) => events.map((e) => JSON.stringify(e));

/** The committed records as a reader sees them; loading must never fail. */
function committed(store: string): string[] {
  if (!existsSync(join(dir, store))) return [];
  const reader = openSessionStore(join(dir, store), { create: false });
  return comparable(reader.events());
}

async function killLoop(
  name: string,
  args: string[],
  check: (killed: boolean) => void,
  afterFullRun: () => void = () => {},
): Promise<number> {
  let full = await timedRun(args);
  afterFullRun();
  const rand = prng(name.length * 7919);
  let kills = 0;
  // No cap on attempts: a kill that comes too late re-measures the run, so the next kill
  // moments fit how fast the machine is now, and each later attempt likely lands mid-run.
  while (kills < KILLS_PER_COMMAND) {
    // A kill that came too late tries the same slice again.
    const { killed, ms } = await killAfter(args, ((kills + rand()) / KILLS_PER_COMMAND) * full);
    if (killed) kills++;
    else full = ms;
    check(killed);
  }
  return kills;
}

describe('kill -9 at random points (R2)', () => {
  it('R2: every committed record survives kills of import, run and compact, and the directory reloads', async () => {
    // import --out: the output is the old file or the new one, whole; no temp file stays behind.
    const reference = join(dir, 'reference.json');
    await timedRun(['import', 'session.json', '--to', 'canonical', '--out', 'reference.json']);
    const expected = readFileSync(reference, 'utf8');
    const importKills = await killLoop(
      'import',
      ['import', 'session.json', '--to', 'canonical', '--out', 'out.json'],
      () => {
        if (existsSync(join(dir, 'out.json')))
          expect(readFileSync(join(dir, 'out.json'), 'utf8')).toBe(expected);
      },
    );
    await timedRun(['import', 'session.json', '--to', 'canonical', '--out', 'out.json']);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    rmSync(join(dir, 'out.json'));

    // run and compact on one session directory, alternately resumed after each kill.
    // `previous` is what a reader saw after the last check (or the last uninterrupted run).
    let previous: string[] = [];
    const survives = () => {
      const now = committed('s');
      expect(now.slice(0, previous.length)).toEqual(previous);
      // A writer reopens it (moving any unfinished write aside) and finds the same records.
      const writer = openSessionStore(join(dir, 's'));
      expect(comparable(writer.events())).toEqual(now);
      expect(writer.loadHistory().length).toBeGreaterThan(0);
      writer.close();
      previous = now;
    };
    const remember = () => {
      previous = committed('s');
    };
    const runKills = await killLoop(
      'run',
      ['run', 'session.json', '--capacity', '6000', '--session-dir', 's'],
      survives,
      remember,
    );
    const compactKills = await killLoop(
      'compact',
      ['compact', 'session.json', '--session-dir', 's'],
      survives,
      remember,
    );
    const boundaries = openSessionStore(join(dir, 's'), { create: false }).listBoundaries();
    expect(boundaries.length).toBeGreaterThan(0);

    process.stdout.write(
      `kill test: ${importKills + runKills + compactKills} kill points (import ${importKills}, run ${runKills}, compact ${compactKills}); ${boundaries.length} boundaries committed\n`,
    );
  });
});
