import type { ChartLabels } from './line-chart.js';
import { axes, frame, niceTicks, PALETTE, svgDocument, tickLabel, xml } from './svg.js';

/** One point of a {@link scatterChart}: a policy's cost and quality. */
export interface ScatterPoint {
  name: string;
  x: number;
  y: number;
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
 * own series, labelled next to its marker), plus the frontier as a dashed step line.
 */
export function scatterChart(points: ScatterPoint[], labels: ChartLabels, width = 900, height = 500): string {
  const xMax = Math.max(1, ...points.map((p) => p.x));
  const xTicks = niceTicks(0, xMax);
  const yMin = Math.min(0, ...points.map((p) => p.y));
  const yTicks = niceTicks(yMin, 1, 5);
  const f = frame(width, height, [0, Math.max(xMax, xTicks[xTicks.length - 1])], [yMin, 1], {
    left: 70,
    right: 40,
    top: 40,
    bottom: 55,
  });
  const front = frontier(points);
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
    const cx = f.x(p.x).toFixed(1);
    const cy = f.y(p.y).toFixed(1);
    const color = PALETTE[i % PALETTE.length];
    const onFront = front.includes(i);
    const anchor = f.x(p.x) > (f.left + f.right) / 2 ? 'end' : 'start';
    const dx = anchor === 'end' ? -9 : 9;
    return `<g class="series" data-series="${xml(p.name)}"><circle cx="${cx}" cy="${cy}" r="${onFront ? 6 : 4.5}" fill="${color}" stroke="${onFront ? '#000' : 'none'}"/><text x="${(Number(cx) + dx).toFixed(1)}" y="${(Number(cy) - 7 - (i % 2) * 9).toFixed(1)}" font-size="11" text-anchor="${anchor}">${xml(`${p.name} (${tickLabel(p.x)}, ${p.y.toFixed(3)})`)}</text></g>`;
  });
  return svgDocument(
    width,
    height,
    labels.title,
    [axes(f, xTicks, yTicks, labels, (v) => v.toFixed(2)), frontierPath, ...marks].join('\n'),
  );
}
