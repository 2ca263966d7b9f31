import { msg, type Message } from '../../src/messages/message.js';
import { summarySections } from '../../src/summary/index.js';

/**
 * Agent conversations for the Restate tests and benchmark: `steps` tool calls of `size`
 * characters each, tagged with `tag` so every message of every session is told apart.
 */
export function agentSteps(tag: string, steps: number, size = 2_000, from = 0): Message[] {
  const out: Message[] = [];
  for (let i = from; i < from + steps; i++) {
    const id = `${tag}-c${i}`;
    out.push(
      msg.user(`${tag}: step ${i}, read src/file${i}.ts and fix what fails.`),
      msg.assistant('', [{ id, name: 'read_file', arguments: JSON.stringify({ path: `src/file${i}.ts` }) }]),
      msg.tool(
        id,
        `// ${tag} file ${i}\n${`line ${i} of ${tag} `.repeat(Math.ceil(size / 12))}`,
        'read_file',
      ),
      msg.assistant(`${tag}: step ${i} done.`),
    );
  }
  return out;
}

/** A summary that follows the template (every section), so no repair request is sent. */
export function templateSummary(): string {
  return summarySections()
    .map((s) => `## ${s}\n- ${s.toLowerCase()}: the agent read the files and fixed what failed`)
    .join('\n');
}
