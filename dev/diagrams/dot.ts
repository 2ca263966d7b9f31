import type { DiagramEdge, DiagramGraph, DiagramState } from './machine-graph.js';

function q(text: string): string {
  return `"${text.replace(/"/g, '\\"')}"`;
}

function find(states: DiagramState[], id: string): DiagramState | undefined {
  for (const s of states) {
    if (s.id === id) return s;
    const inner = find(s.children, id);
    if (inner) return inner;
  }
  return undefined;
}

/** The node an edge attaches to: a compound state is drawn as a cluster, so use its initial leaf. */
function anchor(states: DiagramState[], id: string): { node: string; cluster?: string } {
  const s = find(states, id);
  if (!s || s.kind !== 'compound') return { node: id };
  let leaf = s;
  while (leaf.kind === 'compound') leaf = find(states, leaf.initial ?? leaf.children[0]!.id)!;
  return { node: leaf.id, cluster: `cluster_${s.id}` };
}

/**
 * Renders a machine as Graphviz DOT: compound states as clusters, finals with a double border,
 * `always` edges dashed, `event [guard] / actions` labels, descriptions as SVG tooltips. Output
 * is deterministic (config order only).
 */
export function toDot(graph: DiagramGraph): string {
  const lines = [
    `digraph ${q(graph.id)} {`,
    '  rankdir=TB; compound=true; newrank=true; nodesep=0.5; ranksep=0.45;',
    '  graph [fontname="Helvetica" fontsize=12 labeljust=l];',
    '  node [shape=box style="rounded" fontname="Helvetica" fontsize=11];',
    '  edge [fontname="Helvetica" fontsize=9 color="#444444"];',
  ];
  const writeStates = (states: DiagramState[], indent: string, initial: string, scope: string): void => {
    const start = `__start_${scope}`;
    lines.push(`${indent}${q(start)} [shape=point width=0.12 label=""];`);
    lines.push(`${indent}${q(start)} -> ${q(anchor(graph.states, initial).node)};`);
    for (const s of states) {
      if (s.kind === 'compound') {
        lines.push(`${indent}subgraph ${q(`cluster_${s.id}`)} {`);
        const tip = s.description ? ` tooltip=${q(s.description)};` : '';
        lines.push(`${indent}  label=${q(s.key)}; style="rounded,dashed"; color="#888888";${tip}`);
        writeStates(s.children, `${indent}  `, s.initial ?? s.children[0]!.id, s.id);
        lines.push(`${indent}}`);
      } else {
        const attrs = `${s.kind === 'final' ? ' peripheries=2' : ''}${s.description ? ` tooltip=${q(s.description)}` : ''}`;
        lines.push(`${indent}${q(s.id)} [label=${q(s.key)}${attrs}];`);
      }
    }
  };
  writeStates(graph.states, '  ', graph.initial, graph.id);
  // Parallel edges (same ends, same style) share one arrow with one label line each, so labels never stack.
  const merged = new Map<string, DiagramEdge & { labels: string[]; notes: string[] }>();
  for (const e of graph.edges) {
    const key = `${e.source}|${e.target}|${e.always}`;
    const m = merged.get(key) ?? { ...e, labels: [], notes: [] };
    m.labels.push(e.label);
    if (e.description) m.notes.push(e.description);
    merged.set(key, m);
  }
  for (const e of merged.values()) {
    const from = anchor(graph.states, e.source);
    const to = anchor(graph.states, e.target);
    const attrs = [`label=${q(e.labels.join('\\n'))}`];
    if (e.always) attrs.push('style=dashed');
    if (e.notes.length) attrs.push(`tooltip=${q(e.notes.join(' '))}`);
    if (from.cluster) attrs.push(`ltail=${q(from.cluster)}`);
    if (to.cluster) attrs.push(`lhead=${q(to.cluster)}`);
    lines.push(`  ${q(from.node)} -> ${q(to.node)} [${attrs.join(' ')}];`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
