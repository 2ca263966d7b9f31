import { join } from 'node:path';
import { readSessionFile } from '#src/formats/index.js';
import { msg, textOf, type Message } from '#src/messages/message.js';

/** One step of a real agent session: the call the agent made and what the tool returned. */
export interface RealStep {
  thought: string;
  name: string;
  arguments: string;
  output: string;
}

/** A real session (examples/sessions/django__django-16560.traj.json): its goal and tool steps. */
export interface RealSession {
  system: string;
  /** The user's first message: the task. */
  goal: string;
  /** A line of the goal every prompt must still state. */
  goalLine: string;
  steps: RealStep[];
}

export const SESSION_FILE = join(process.cwd(), 'examples/sessions/django__django-16560.traj.json');

/** Loads the real session's task and its tool calls paired with their outputs. */
export function loadRealSession(): RealSession {
  const messages: Message[] = readSessionFile(SESSION_FILE).sessions[0].messages;
  const system = textOf(messages.find((m) => m.role === 'system')?.content ?? '');
  const goal = textOf(messages.find((m) => m.role === 'user')?.content ?? '');
  const outputs = new Map<string, string>();
  for (const m of messages)
    if (m.role === 'tool' && m.toolCallId) outputs.set(m.toolCallId, textOf(m.content));
  const steps: RealStep[] = [];
  for (const m of messages)
    for (const c of m.toolCalls ?? [])
      // Steps whose output says something (over 200 characters), as an agent loop would read.
      if ((outputs.get(c.id)?.length ?? 0) > 200)
        steps.push({
          thought: textOf(m.content),
          name: c.name,
          arguments: c.arguments,
          output: outputs.get(c.id)!,
        });
  const goalLine =
    'Allow to customize the code attribute of ValidationError raised by BaseConstraint.validate';
  if (!goal.includes(goalLine)) throw new Error('the real session no longer states its goal line');
  return { system, goal, goalLine, steps };
}

/** The conversation an agent loop of `count` steps accumulates, unprojected (for size comparisons). */
export function fullConversation(real: RealSession, count: number): Message[] {
  const out: Message[] = [msg.user(real.goal)];
  real.steps.slice(0, count).forEach((s, i) => {
    out.push(
      msg.assistant(s.thought.slice(0, 400), [{ id: `call-${i}`, name: s.name, arguments: s.arguments }]),
    );
    out.push(msg.tool(`call-${i}`, s.output, s.name));
  });
  return out;
}
