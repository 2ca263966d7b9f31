import type { Message, ToolCall } from '../../src/messages/message.js';
import { msg } from '../../src/messages/message.js';
import { prng, WORDS } from './synthetic-session.js';

/**
 * SYNTHETIC long agent sessions for the retention pilot (marked `synthetic:` in every
 * report): the real corpus has few sessions long enough for the peers' 50k–100k triggers,
 * so these let every policy act. Unlike `syntheticSession` (projection speed), the agent
 * here USES what it read: its messages name identifiers from earlier results (mostly
 * recent, sometimes far back) and re-run earlier reads, so the evidence metric has needs.
 * The user adds follow-up requests now and then (a second user turn is what lets opencode
 * prune at all).
 */

const PARTS = WORDS;
const DIRS = ['core', 'io', 'net', 'store', 'cli', 'util'];

interface ReadResult {
  call: ToolCall;
  idents: string[];
}

/** Options of {@link syntheticAgentSession}. */
export interface SyntheticAgentOptions {
  /** Stop once the session holds about this many characters (≈ 4 per token). */
  targetChars: number;
  seed: number;
  /**
   * Make every result a file read of about this many tokens, [min, max] (2,000–8,000 is an
   * ordinary source file): sessions where a few results fill a small window.
   */
  readTokens?: readonly [number, number];
}

/** A deterministic synthetic agent session (see the module comment). */
export function syntheticAgentSession({ targetChars, seed, readTokens }: SyntheticAgentOptions): Message[] {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const ident = () =>
    `${pick(PARTS)}${pick(PARTS).replace(/^./, (c) => c.toUpperCase())}${Math.floor(rand() * 100_000)}`;
  const out: Message[] = [
    msg.system(
      'You are a coding agent working in a TypeScript repository. Use the tools to read, search and test.',
    ),
    msg.user(
      'The request budget tests fail after the last refactor. Find the cause and fix it without changing the public API.',
    ),
  ];
  const results: ReadResult[] = [];
  let chars = 0;
  let callId = 0;
  const push = (m: Message) => {
    out.push(m);
    chars += JSON.stringify(m).length;
  };
  while (chars < targetChars) {
    if (results.length > 0 && rand() < 0.06)
      push(msg.user(`Also keep ${pick(PARTS)} behaviour unchanged and run the tests again when done.`));
    const calls: ToolCall[] = [];
    const fresh: ReadResult[] = [];
    const n = 1 + Math.floor(rand() * rand() * 3);
    for (let k = 0; k < n; k++) {
      if (results.length > 4 && rand() < 0.08) {
        // Re-run an earlier read with the same arguments (its newest result is needed).
        const old = results[Math.floor(rand() * results.length)].call;
        calls.push({ ...old, id: `call_${++callId}` });
        continue;
      }
      const name = readTokens ? 'read_file' : pick(['read_file', 'read_file', 'grep', 'run_tests']);
      const args =
        name === 'grep'
          ? { pattern: ident(), path: `src/${pick(DIRS)}` }
          : { path: `src/${pick(DIRS)}/${pick(PARTS)}.ts` };
      calls.push({ id: `call_${++callId}`, name, arguments: JSON.stringify(args) });
    }
    push(msg.assistant(reference(results, rand), calls));
    for (const c of calls) {
      // A read of one identifier is four lines, about 50 tokens.
      const count = readTokens
        ? Math.round((readTokens[0] + rand() * (readTokens[1] - readTokens[0])) / 50)
        : 4 + Math.floor(rand() * 40);
      const idents = Array.from({ length: count }, ident);
      push(msg.tool(c.id, resultText(c.name, idents, rand), c.name));
      fresh.push({ call: c, idents });
    }
    results.push(...fresh);
  }
  push(msg.assistant('The budget tests pass again; the fix is in place.'));
  return out;
}

/** Assistant prose naming an identifier only an earlier result showed: mostly recent, sometimes far back. */
function reference(results: readonly ReadResult[], rand: () => number): string {
  if (results.length === 0 || rand() < 0.3) return '';
  const r = rand();
  const back =
    r < 0.6
      ? 1 + Math.floor(rand() * 3)
      : r < 0.9
        ? 4 + Math.floor(rand() * 16)
        : 20 + Math.floor(rand() * 200);
  const src = results[Math.max(0, results.length - back)];
  const id = src.idents[Math.floor(rand() * src.idents.length)];
  return `The value comes from ${id}; I will check where it is set next.`;
}

function resultText(tool: string, idents: readonly string[], rand: () => number): string {
  const lines: string[] = [];
  for (const id of idents) {
    const n = Math.floor(rand() * 900);
    if (tool === 'run_tests')
      lines.push(`  ✕ ${id} keeps the budget (${n} ms)`, `    expected ${n} to be below ${n + 7}`);
    else if (tool === 'grep') lines.push(`src/core/${id}.ts:${n}:  if (${id} > limit) return ${id};`);
    else
      lines.push(
        `export function ${id}(input: number, limit = ${n}): number {`,
        `  const scaled = Math.floor(input * ${(rand() * 3).toFixed(3)});`,
        `  return scaled > limit ? limit : scaled; // ${id} clamps to the window`,
        '}',
      );
  }
  return lines.join('\n');
}
