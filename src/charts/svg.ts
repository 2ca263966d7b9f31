/** Minimal SVG building blocks shared by the report charts (plain strings, no DOM). */

/** Escapes text for XML content and attribute values. */
export function xml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** A color per series index, distinguishable on white (Tableau 10 + extras). */
export const PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
  '#1b1b1b',
  '#8cd17d',
];

/** Round, human tick values covering [min, max] (about `count` of them). */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!(max > min)) return [min];
  const raw = (max - min) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step)
    out.push(Number(v.toPrecision(12)));
  return out;
}

/** Short tick labels: 12k, 1.5M, 0.95. */
export function tickLabel(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (a >= 1e3) return `${Number((v / 1e3).toPrecision(3))}k`;
  return String(Number(v.toPrecision(3)));
}

/** Plot geometry: the drawing area inside margins and linear scales onto it. */
export interface Frame {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
  x(v: number): number;
  y(v: number): number;
}

/** A frame for the given data ranges (the y axis grows upwards). */
export function frame(
  width: number,
  height: number,
  xRange: [number, number],
  yRange: [number, number],
  margins = { left: 70, right: 200, top: 40, bottom: 55 },
): Frame {
  const left = margins.left;
  const right = width - margins.right;
  const top = margins.top;
  const bottom = height - margins.bottom;
  const span = (r: [number, number]) => (r[1] > r[0] ? r[1] - r[0] : 1);
  return {
    width,
    height,
    left,
    right,
    top,
    bottom,
    x: (v) => left + ((v - xRange[0]) / span(xRange)) * (right - left),
    y: (v) => bottom - ((v - yRange[0]) / span(yRange)) * (bottom - top),
  };
}

/** Axes with ticks, grid lines, a title and the two axis labels. */
export function axes(
  f: Frame,
  xTicks: number[],
  yTicks: number[],
  labels: { title: string; x: string; y: string },
  yFormat: (v: number) => string = tickLabel,
): string {
  const parts: string[] = [];
  parts.push(
    `<text class="title" x="${f.left}" y="${f.top - 16}" font-size="15" font-weight="bold">${xml(labels.title)}</text>`,
  );
  for (const t of yTicks) {
    const y = f.y(t).toFixed(1);
    parts.push(`<line x1="${f.left}" x2="${f.right}" y1="${y}" y2="${y}" stroke="#e5e5e5"/>`);
    parts.push(
      `<text x="${f.left - 6}" y="${y}" font-size="11" text-anchor="end" dominant-baseline="middle">${xml(yFormat(t))}</text>`,
    );
  }
  for (const t of xTicks) {
    const x = f.x(t).toFixed(1);
    parts.push(`<line x1="${x}" x2="${x}" y1="${f.bottom}" y2="${f.bottom + 4}" stroke="#333"/>`);
    parts.push(
      `<text x="${x}" y="${f.bottom + 17}" font-size="11" text-anchor="middle">${xml(tickLabel(t))}</text>`,
    );
  }
  parts.push(`<line x1="${f.left}" x2="${f.right}" y1="${f.bottom}" y2="${f.bottom}" stroke="#333"/>`);
  parts.push(`<line x1="${f.left}" x2="${f.left}" y1="${f.top}" y2="${f.bottom}" stroke="#333"/>`);
  parts.push(
    `<text class="x-label" x="${(f.left + f.right) / 2}" y="${f.height - 12}" font-size="12" text-anchor="middle">${xml(labels.x)}</text>`,
  );
  const cy = (f.top + f.bottom) / 2;
  parts.push(
    `<text class="y-label" x="16" y="${cy}" font-size="12" text-anchor="middle" transform="rotate(-90 16 ${cy})">${xml(labels.y)}</text>`,
  );
  return parts.join('\n');
}

/** A legend box to the right of the plot, one swatch per series. */
export function legend(f: Frame, names: string[], dashed: (i: number) => boolean = () => false): string {
  return names
    .map((name, i) => {
      const y = f.top + 8 + i * 18;
      const x = f.right + 16;
      const dash = dashed(i) ? ' stroke-dasharray="5 3"' : '';
      return `<line x1="${x}" x2="${x + 22}" y1="${y}" y2="${y}" stroke="${PALETTE[i % PALETTE.length]}" stroke-width="3"${dash}/><text x="${x + 28}" y="${y}" font-size="11" dominant-baseline="middle">${xml(name)}</text>`;
    })
    .join('\n');
}

/** Wraps chart content in an `<svg>` root with a viewBox and white background. */
export function svgDocument(width: number, height: number, title: string, body: string): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" font-family="Helvetica, Arial, sans-serif">`,
    `<title>${xml(title)}</title>`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    body,
    '</svg>',
    '',
  ].join('\n');
}
