/**
 * The real session the adapter examples replay (examples/sessions/django__django-16560.traj.json):
 * the user's task and the agent's tool calls whose outputs say something, with those outputs.
 */
import { textOf, type ToolCall } from 'context-compactor';
import { readSessionFile } from 'context-compactor/unstable/formats';

export interface ReplayStep {
  thought: string;
  call: ToolCall;
  output: string;
}

export function loadRealSession(count: number): { goal: string; steps: ReplayStep[] } {
  const messages = readSessionFile('examples/sessions/django__django-16560.traj.json').sessions[0].messages;
  const goal = textOf(messages.find((m) => m.role === 'user')!.content);
  const outputs = new Map(
    messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, textOf(m.content)]),
  );
  const steps = messages
    .flatMap((m) =>
      (m.toolCalls ?? []).map((call) => ({
        thought: textOf(m.content),
        call,
        output: outputs.get(call.id) ?? '',
      })),
    )
    .filter((s) => s.output.length > 200);
  return { goal, steps: steps.slice(0, count) };
}
