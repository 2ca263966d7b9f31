import { axes, frame, legend, niceTicks, PALETTE, svgDocument, xml } from '../../../src/charts/svg.js';

/** One line of a {@link lineChart}. */
export interface LineSeries {
  name: string;
  points: Array<[number, number]>;
}

/** Labels of a chart. */
export interface ChartLabels {
  title: string;
  x: string;
  y: string;
}

/**
 * A line chart as an SVG string: one `<g class="series">` per series (polyline with
 * `data-series` naming it), shared axes starting at 0, a legend on the right.
 */
export function lineChart(series: LineSeries[], labels: ChartLabels, width = 900, height = 460): string {
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const xMax = Math.max(1, ...xs);
  const yMax = Math.max(1, ...ys);
  const xTicks = niceTicks(0, xMax);
  const yTicks = niceTicks(0, yMax);
  const f = frame(
    width,
    height,
    [0, Math.max(xMax, xTicks[xTicks.length - 1])],
    [0, Math.max(yMax, yTicks[yTicks.length - 1])],
  );
  const lines = series.map((s, i) => {
    const pts = s.points.map(([x, y]) => `${f.x(x).toFixed(1)},${f.y(y).toFixed(1)}`).join(' ');
    const dash = i >= PALETTE.length ? ' stroke-dasharray="5 3"' : '';
    return `<g class="series" data-series="${xml(s.name)}"><polyline fill="none" stroke="${PALETTE[i % PALETTE.length]}" stroke-width="1.8"${dash} points="${pts}"/></g>`;
  });
  return svgDocument(
    width,
    height,
    labels.title,
    [
      axes(f, xTicks, yTicks, labels),
      ...lines,
      legend(
        f,
        series.map((s) => s.name),
        (i) => i >= PALETTE.length,
      ),
    ].join('\n'),
  );
}
