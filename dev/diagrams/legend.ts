import type { DiagramGraph, DiagramState } from './machine-graph.js';

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

function flatten(states: DiagramState[]): DiagramState[] {
  return states.flatMap((s) => [s, ...flatten(s.children)]);
}

/**
 * The machine's own words under its diagram: every state with its `description`, then every
 * transition that carries one, so the README reads like the machine file.
 */
export function legend(graph: DiagramGraph): string[] {
  const path = (id: string) => id.slice(graph.id.length + 1);
  const lines = ['| State | What happens there |', '|---|---|'];
  for (const s of flatten(graph.states))
    lines.push(`| \`${path(s.id)}\`${s.kind === 'final' ? ' (final)' : ''} | ${cell(s.description ?? '')} |`);
  const notes = graph.edges.filter((e) => e.description);
  if (notes.length > 0) {
    lines.push('', 'Transitions with a note:', '');
    for (const e of notes)
      lines.push(`- \`${path(e.source)}\` → \`${path(e.target)}\` on \`${e.label}\`: ${e.description}`);
  }
  return lines;
}
