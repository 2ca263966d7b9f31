import { beforeAll, describe, expect, jest, test } from '@jest/globals';
import { runRow, type AgentRow } from '#dev/agents/agent-row.js';
import { agentById } from '#dev/agents/agents.js';
import { installedAgent } from '#dev/agents/install.js';
import { cellFailures, pastFailures } from '#dev/agents/verdict.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

/*
 * Claude Code and Codex from npm, each with its defaults (its own system prompt, tools and
 * output limit), headless through `compactor serve` against a fake model that enforces the
 * window and has them read 8 files of 2k–8k tokens one per turn; each also directly, the
 * baseline. Then the task that needs the past, at a window where the first file is cleared by
 * the end: the answer is a marker line from the middle of that file, which the model sees only
 * by calling the proxy's recall tool. The agents are installed into a cache outside the repository by
 * `npx tsx dev/agents/install.ts` (CI does it first and sets COMPACTOR_AGENTS_REQUIRED=1);
 * without them the test is skipped here and fails in CI.
 */

// The agents' rows run as child processes, each waited for to its end.
jest.setTimeout(PROCESS_TEST_MS);

const CELLS: Array<{ agent: string; windows: number[]; pastWindows: number[] }> = [
  { agent: 'claude-code', windows: [32_000, 128_000], pastWindows: [32_000] },
  { agent: 'codex', windows: [16_000, 128_000], pastWindows: [16_000] },
];
const required = process.env.COMPACTOR_AGENTS_REQUIRED === '1';
const missing = CELLS.map((c) => agentById(c.agent)).filter((a) => !installedAgent(a));
const install = `npx tsx dev/agents/install.ts ${CELLS.map((c) => c.agent).join(' ')}`;

if (missing.length > 0 && required)
  test('the agent CLIs are installed', () => {
    throw new Error(`not installed: ${missing.map((a) => a.label).join(', ')} (${install})`);
  });

const suite = missing.length === 0 ? describe : describe.skip;
suite(
  `real agents with their defaults through compactor serve${missing.length > 0 ? ` (skipped: ${missing.map((a) => a.label).join(', ')} not installed; run ${install})` : ''}`,
  () => {
    const rows = new Map<string, AgentRow>();

    beforeAll(async () => {
      // Both rows at once: each is a child process that mostly waits on its agent.
      const done = await Promise.all(
        CELLS.map((c) =>
          runRow({
            agent: c.agent,
            windows: c.windows,
            pastWindows: c.pastWindows,
            files: 8,
            seed: 20_261_204,
            limitSeconds: 300,
          }),
        ),
      );
      for (const row of done) rows.set(row.agent, row);
    });

    test.each(CELLS.map((c) => c.agent))('%s finishes the task directly (the baseline)', (agent) => {
      const row = rows.get(agent)!;
      expect(row.error).toBeUndefined();
      expect(row.direct).toMatchObject({
        exit: 0,
        answered: true,
        overWindow: 0,
        badPairing: 0,
        taskMissing: 0,
      });
      expect(row.direct!.steps).toEqual([...Array.from({ length: 8 }, (_, n) => n), 'final']);
    });

    test.each(CELLS.flatMap((c) => c.windows.map((w) => [c.agent, w] as const)))(
      'H1/N1: %s at a %i-token window: exit 0 and the final answer, nothing refused or over the window, pairing and task kept, clearing in big steps, no more tokens upstream than directly',
      (agent, window) => {
        const row = rows.get(agent)!;
        expect(row.skipped).toEqual([]);
        const cell = row.cells.find((c) => c.spec.window === window);
        expect(cell).toBeDefined();
        const failures = cellFailures(cell!, row.direct);
        expect({ agent, window, failures, refused: cell!.refusalSample }).toEqual({
          agent,
          window,
          failures: [],
          refused: '',
        });
      },
    );

    test.each(CELLS.flatMap((c) => c.pastWindows.map((w) => [c.agent, w] as const)))(
      'N1: %s at a %i-token window answers with a marker from a file cleared by then, through recall: no loop, one tool list with the recall tool in every request',
      (agent, window) => {
        const cell = rows.get(agent)!.past?.find((c) => c.spec.window === window);
        expect(cell).toBeDefined();
        expect({ agent, window, cleared: cell!.pastCleared, failures: pastFailures(cell!) }).toEqual({
          agent,
          window,
          cleared: true,
          failures: [],
        });
        expect(cell!.recallRounds).toBeGreaterThanOrEqual(1);
      },
    );
  },
);
