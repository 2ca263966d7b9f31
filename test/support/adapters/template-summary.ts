import { textOf, type Message } from '#src/messages/message.js';
import { loadSummaryPrompt } from '#src/summary/index.js';

/**
 * What the injected summary models of the adapter tests write: the summary template's
 * sections, the goal taken from the first user message (or carried over from an earlier
 * summary's Goal section, as a model would), the last commands run, and `mark` first so a
 * test can tell this model wrote it. Synchronous, as LangChain's fake model needs.
 */
export function templateSummary(messages: readonly Message[], mark: string): string {
  let goal = '';
  for (const m of messages) {
    if (m.role !== 'user') continue;
    const text = textOf(m.content);
    const carried = /## Goal\n([\s\S]*?)(?:\n## |$)/.exec(text);
    goal = carried ? carried[1].trim() : text.slice(0, 600);
    break;
  }
  const commands = messages
    .flatMap((m) => m.toolCalls ?? [])
    .slice(-5)
    .map((c) => `- ${c.name} ${c.arguments.slice(0, 160)}`);
  const body: Record<string, string> = {
    Goal: goal,
    'Commands (exact, with exit codes)': commands.join('\n') || '- none yet',
    'Plan & next steps': '- continue from the last command',
  };
  const sections = loadSummaryPrompt().sections.map((s) => `## ${s}\n${body[s] ?? '- (none)'}`);
  return [mark, ...sections].join('\n\n');
}
