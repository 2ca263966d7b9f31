import type { ChartLabels } from './line-chart.js';
import { axes, frame, niceTicks, PALETTE, svgDocument, tickLabel, xml } from '../../../src/charts/svg.js';

/** One point of a {@link scatterChart}: a policy's cost and quality. */
export interface ScatterPoint {
  name: string;
  x: number;
  y: number;
  /** False for a policy that cannot be on the frontier (it lost the task or broke the protocol); drawn hollow. */
  admissible?: boolean;
}

/**
 * Indices of the points on the efficient frontier when smaller x and larger y are better:
 * a point is on it when no other point has x ≤ and y ≥ with at least one strict.
 */
export function frontier(points: readonly ScatterPoint[]): number[] {
  return points
    .map((p, i) => ({ p, i }))
    .filter(
      ({ p, i }) => !points.some((q, j) => j !== i && q.x <= p.x && q.y >= p.y && (q.x < p.x || q.y > p.y)),
    )
    .map(({ i }) => i)
    .sort((a, b) => points[a].x - points[b].x);
}

/**
 * A scatter plot as an SVG string: one `<g class="series">` per point (each policy is its
 * own series, named in the legend with its cost and recall), plus the frontier as a dashed
 * step line.
 */
export function scatterChart(
  points: ScatterPoint[],
  labels: ChartLabels,
  width = 1000,
  height = 500,
): string {
  const xMax = Math.max(1, ...points.map((p) => p.x));
  const xTicks = niceTicks(0, xMax);
  const yMin = Math.min(0, ...points.map((p) => p.y));
  const yTicks = niceTicks(yMin, 1, 5);
  const f = frame(width, height, [0, Math.max(xMax, xTicks[xTicks.length - 1])], [yMin, 1], {
    left: 70,
    right: 330,
    top: 45,
    bottom: 55,
  });
  // The frontier is drawn through admissible points only; indices map back to `points`.
  const eligible = points.map((p, i) => ({ p, i })).filter(({ p }) => p.admissible !== false);
  const front = frontier(eligible.map(({ p }) => p)).map((k) => eligible[k].i);
  let step = '';
  front.forEach((idx, k) => {
    const p = points[idx];
    const x = f.x(p.x).toFixed(1);
    const y = f.y(p.y).toFixed(1);
    step += k === 0 ? `M${x},${y}` : ` H${x} V${y}`;
  });
  const frontierPath = step
    ? `<path class="frontier" d="${step}" fill="none" stroke="#888" stroke-dasharray="6 4" stroke-width="1.5"/>`
    : '';
  const marks = points.map((p, i) => {
    const onFront = front.includes(i);
    const color = PALETTE[i % PALETTE.length];
    const fill =
      p.admissible === false
        ? `fill="white" stroke="${color}" stroke-width="2"`
        : `fill="${color}" fill-opacity="0.85" stroke="${onFront ? '#000' : 'none'}"`;
    return `<g class="series" data-series="${xml(p.name)}"><circle cx="${f.x(p.x).toFixed(1)}" cy="${f.y(p.y).toFixed(1)}" r="${onFront ? 6.5 : 5}" ${fill}/></g>`;
  });
  // A legend instead of inline labels: policies often coincide (e.g. several never trigger).
  const key = points
    .map((p, i) => {
      const y = f.top + 8 + i * 18;
      const x = f.right + 20;
      const color = PALETTE[i % PALETTE.length];
      const mark =
        p.admissible === false
          ? `fill="white" stroke="${color}" stroke-width="2"`
          : `fill="${color}"${front.includes(i) ? ' stroke="#000"' : ''}`;
      const label = `${p.name}: ${tickLabel(p.x)} tokens, ${(p.y * 100).toFixed(1)}%${p.admissible === false ? ' (not admissible)' : ''}`;
      return `<circle cx="${x}" cy="${y}" r="5" ${mark}/><text x="${x + 12}" y="${y}" font-size="11" dominant-baseline="middle">${xml(label)}</text>`;
    })
    .join('\n');
  const note = `<text x="${f.right + 20}" y="${f.top + 14 + points.length * 18}" font-size="10" fill="#555">outlined = on the frontier (dashed); hollow = not admissible</text>`;
  return svgDocument(
    width,
    height,
    labels.title,
    [axes(f, xTicks, yTicks, labels, (v) => v.toFixed(2)), frontierPath, ...marks, key, note].join('\n'),
  );
}
