/**
 * Embedding Compactor in an agent loop (offline: no network, no API key).
 *
 *   npx tsx examples/library-usage.ts
 *
 * The "model" below is a scripted stand-in that reads files and runs tests; replace
 * `callModel` with your provider call. Each iteration: build the request projection
 * (pairing repair + tool-result clearing), send it, append what came back, feed the
 * provider's cache usage to the health monitor, then let Compactor run its headless turn —
 * which compacts (summarizes) only when clearing is not enough.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCompactorSession, msg, type Message, type ToolSchema } from 'context-compactor';

const SYSTEM = 'You are a coding agent. Run the tests before you finish.';
const TOOLS: ToolSchema[] = [
  { name: 'bash', description: 'Run a shell command', parameters: { type: 'object' } },
  { name: 'read_file', description: 'Read a file', parameters: { type: 'object' } },
];

/** A scripted model: step n reads a file and runs a command (two parallel tool calls). */
function callModel(request: readonly Message[], step: number): { reply: Message; inputTokens: number } {
  const notes = `Step ${step}: module_${step}.py multiplies by ${step}; the edge case fails for negative input. `;
  const reply = msg.assistant(notes.repeat(25), [
    { id: `read-${step}`, name: 'read_file', arguments: JSON.stringify({ path: `src/module_${step}.py` }) },
    {
      id: `test-${step}`,
      name: 'bash',
      arguments: JSON.stringify({ command: `pytest -q tests/test_${step}.py` }),
    },
  ]);
  return { reply, inputTokens: request.length * 150 };
}

/** Tool outputs: large file contents and test logs (what fills real context windows). */
function runTools(step: number): Message[] {
  const source = `def f_${step}(x):\n    return x * ${step}\n`.repeat(120);
  const log = `tests/test_${step}.py ....F\nFAILED test_edge_${step} - AssertionError\nexit code: 1\n`.repeat(
    15,
  );
  return [msg.tool(`read-${step}`, source, 'read_file'), msg.tool(`test-${step}`, log, 'bash')];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'compactor-example-'));
  const session = createCompactorSession({
    route: { provider: 'offline' }, // the embedded deterministic summarizer (32,000-token default window)
    limits: { capacity: 16_000, reservedOutput: 2_000 },
    // VT Code's clearing of old tool results; the default preset keeps them until compaction.
    preset: 'vtcode',
    envelope: { provider: 'offline', model: 'compactor-offline-v1', system: SYSTEM, tools: TOOLS },
    sessionDir: join(dir, 'session'), // durable: events.jsonl + full-history artifacts per compaction
  });
  console.log(
    `route: ${session.route.provider}/${session.route.model}, strategy ${session.route.strategy.kind}`,
  );
  const b = session.budgets;
  console.log(
    `budgets: capacity ${b.capacity}, clearing trigger ${b.localTrigger}, threshold ${b.compactionThreshold}`,
  );

  session.append(msg.system(SYSTEM), msg.user('Fix the failing edge-case tests in every module.'));
  for (let step = 1; step <= 16; step++) {
    const request = session.prepareRequest(); // what you send: never written back to history
    const d = request.diagnostics;
    const { reply, inputTokens } = callModel(request.messages, step);
    session.recordUsage({ inputTokens, cachedInputTokens: Math.floor(inputTokens * 0.8) }, request.messages);

    const turn = await session.runTurn({ pending: [reply, ...runTools(step)] });
    const line = `step ${String(step).padStart(2)}: request ${d.originalTokens} → ${d.projectedTokens} tokens (${d.clearedResults} results cleared)`;
    if (turn.decision === 'compacted')
      console.log(
        `${line}; compacted ${turn.items.before} → ${turn.items.after} items (${turn.summaryCalls} summary call)`,
      );
    else
      console.log(`${line}; ${turn.decision}${turn.guardReason ? ` (loop guard: ${turn.guardReason})` : ''}`);
  }

  const report = await session.compact({ instructions: 'Keep every failing test name.' });
  console.log(report.message);
  console.log(`boundaries recorded: ${session.store?.listBoundaries().length ?? 0}`);
  console.log(`cache health: ${JSON.stringify(session.cacheHealth.state())}`);
  session.close();
  rmSync(dir, { recursive: true, force: true });
}

await main();
