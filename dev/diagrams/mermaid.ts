import type { DiagramGraph, DiagramState } from './machine-graph.js';

/** Mermaid-safe id: `turn.working.syncing` → `working_syncing` (the machine id prefix dropped). */
export function mermaidId(graph: DiagramGraph, id: string): string {
  return id.slice(graph.id.length + 1).replace(/[^A-Za-z0-9]/g, '_');
}

function mermaidLabel(text: string): string {
  return text.replace(/[;#]/g, ' ').replace(/:/g, '\u2236');
}

/** Renders a machine as a Mermaid `stateDiagram-v2` (GitHub renders it inline). */
export function toMermaid(graph: DiagramGraph): string {
  const lines = ['stateDiagram-v2', '  direction TB'];
  const writeStates = (states: DiagramState[], indent: string, initial: string): void => {
    lines.push(`${indent}[*] --> ${mermaidId(graph, initial)}`);
    for (const s of states) {
      const id = mermaidId(graph, s.id);
      if (s.kind === 'compound') {
        lines.push(`${indent}state "${s.key}" as ${id} {`);
        writeStates(s.children, `${indent}  `, s.initial ?? s.children[0]!.id);
        lines.push(`${indent}}`);
      } else {
        lines.push(`${indent}state "${s.key}" as ${id}`);
        if (s.kind === 'final') lines.push(`${indent}${id} --> [*]`);
      }
    }
  };
  writeStates(graph.states, '  ', graph.initial);
  for (const e of graph.edges)
    lines.push(`  ${mermaidId(graph, e.source)} --> ${mermaidId(graph, e.target)}: ${mermaidLabel(e.label)}`);
  return `${lines.join('\n')}\n`;
}
