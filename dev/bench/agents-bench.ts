import { runRow, type AgentRow } from '../agents/agent-row.js';
import { AGENTS } from '../agents/agents.js';
import { installAgent } from '../agents/install.js';
import { matrixTable, pastTable } from '../agents/verdict.js';
import { MAX_RECALL_ROUNDS } from '../../src/serve/recall-loop.js';
import type { BenchSuite } from './types.js';

/*
 * The agent matrix: the real agent CLIs from npm, each with its defaults, headless through
 * `compactor serve` at 16k, 32k and 128k against a fake model that enforces the window, and
 * each directly (the baseline). An agent that fails to install is reported and the others run.
 * COMPACTOR_AGENTS=claude-code,codex picks agents.
 */

export const MATRIX_WINDOWS = [16_000, 32_000, 128_000];
/** Windows of the task that needs the past (`--quick`: 32k only). */
export const PAST_WINDOWS = [16_000, 32_000, 128_000];
const SEED = 20_261_204;
/** How many files each agent reads (8 to 16 across the matrix; `--quick`: 8 each). */
export const MATRIX_FILES: Record<string, number> = {
  'claude-code': 16,
  'claude-code-latest': 12,
  codex: 16,
  opencode: 10,
  'qwen-code': 14,
  'gemini-cli': 8,
};

export const agentsSuite: BenchSuite = {
  name: 'agents',
  async run(ctx) {
    const picked = process.env.COMPACTOR_AGENTS?.split(',').filter(Boolean);
    const agents = picked ? AGENTS.filter((a) => picked.includes(a.id)) : AGENTS;
    const rows: AgentRow[] = [];
    for (const agent of agents) {
      try {
        await installAgent(agent);
      } catch (e) {
        rows.push({
          agent: agent.id,
          cells: [],
          skipped: [],
          error: `install failed: ${(e as Error).message.split('\n')[0]}`,
        });
        continue;
      }
      ctx.log(`bench: agents: ${agent.label}…`);
      const files = ctx.quick ? 8 : (MATRIX_FILES[agent.id] ?? 12);
      rows.push(
        await runRow({
          agent: agent.id,
          windows: MATRIX_WINDOWS,
          pastWindows: ctx.quick ? [32_000] : PAST_WINDOWS,
          files,
          seed: SEED,
          limitSeconds: 600,
        }),
      );
    }
    const { headers, rows: table, notes } = matrixTable(rows);
    const past = pastTable(rows);
    const isolated = rows.some((r) => r.isolated);
    return [
      {
        title: `Agent CLIs with their defaults through compactor serve: ${ctx.quick ? 8 : '8–16'} files of 2k–8k tokens read one per turn`,
        headers,
        rows: table,
        notes: [
          ...notes,
          `Each agent runs headless with its own system prompt, tools and output limit (only keys, base URLs and telemetry, update and plugin checks set), ${isolated ? 'in a network namespace with only loopback' : 'pointed at 127.0.0.1 by its settings'}. The model enforces the window on input plus the output a request asks for and answers a request over it with the provider's own error.`,
          `Tokens are tiktoken o200k over every string of a request body. "prefix kept": consecutive loop requests where the newer one extends the older byte for byte (cache markers aside); "agent's own": pairs where the agent itself changed its earlier items (the proxy passed the change on). "clearing steps": prefix changes the proxy made with no summary call before them, with the least any of them freed (a step that leaves no older result uncleared frees all there is). "upstream tokens": every request the model received, summary calls included, against the same task sent directly; "worst running tally": the highest ratio, at any turn, of the tokens sent so far to the direct run's at that turn, the random ids (UUIDs) an agent draws anew in each run counted as one fixed id.`,
        ],
      },
      {
        title: `The task that needs the past: the same reads, then the marker line of the first file`,
        headers: past.headers,
        rows: past.rows,
        notes: [
          ...past.notes,
          `The model answers with the marker only when the request it gets holds it. Where the first file's result was cleared by the final step, it calls the proxy's recall tool with the recall id the clearing left beside that file's read call; the proxy answers the call itself and asks again, and the agent gets only the final answer. "recall calls": calls the model made in the session; "tool lists": how many different tool lists (their JSON bytes) the session's requests carried, over how many requests, the recall tool in each; a cell holds with the marker answered, exit 0, no refusal or request over the window, pairing and task intact, at most ${MAX_RECALL_ROUNDS} recall calls, none let through to the agent, one tool list.`,
        ],
      },
    ];
  },
};
