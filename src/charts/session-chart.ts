import type { SessionTimeline } from '../stats/timeline.js';
import { axes, frame, niceTicks, svgDocument, xml, type Frame } from './svg.js';

/**
 * One session for users: tokens per turn before and after projection, the window, the
 * clearing trigger and the compaction threshold as dashed lines, and a marker where clearing
 * applied and where compaction ran. Every element carries a class (`before`, `after`,
 * `window`, `trigger`, `threshold`, `clearing`, `compaction`) so tools and tests can find it.
 */
export function sessionChart(timeline: SessionTimeline, title: string, width = 1000, height = 480): string {
  const t = timeline.turns;
  const levels = [timeline.capacity, timeline.localTrigger, timeline.compactionThreshold].filter(
    (v): v is number => v !== null,
  );
  const yMax = Math.max(1, ...t.map((x) => x.before), ...levels);
  const xMax = Math.max(1, t.length);
  const xTicks = niceTicks(0, xMax);
  const yTicks = niceTicks(0, yMax);
  const f = frame(
    width,
    height,
    [0, Math.max(xMax, xTicks.at(-1) ?? xMax)],
    [0, Math.max(yMax, yTicks.at(-1) ?? yMax)],
  );
  const line = (cls: string, color: string, ys: number[], dash = '') =>
    `<polyline class="${cls}" fill="none" stroke="${color}" stroke-width="1.8"${dash} points="${ys
      .map((y, i) => `${f.x(i + 1).toFixed(1)},${f.y(y).toFixed(1)}`)
      .join(' ')}"/>`;
  const level = (cls: string, color: string, label: string, v: number | null) =>
    v === null
      ? ''
      : `<g class="${cls}"><line x1="${f.left}" x2="${f.right}" y1="${f.y(v).toFixed(1)}" y2="${f.y(v).toFixed(1)}" stroke="${color}" stroke-dasharray="6 4"/><text x="${f.right + 6}" y="${f.y(v).toFixed(1)}" font-size="11" dominant-baseline="middle">${xml(`${label} ${v.toLocaleString('en-US')}`)}</text></g>`;
  return svgDocument(
    width,
    height,
    title,
    [
      axes(f, xTicks, yTicks, { title, x: 'turn (assistant message)', y: 'tokens' }),
      level('window', '#1b1b1b', 'window', timeline.capacity),
      level('trigger', '#59a14f', 'clearing trigger', timeline.localTrigger),
      level('threshold', '#e15759', 'compaction threshold', timeline.compactionThreshold),
      line(
        'before',
        '#bab0ac',
        t.map((x) => x.before),
      ),
      line(
        'after',
        '#4e79a7',
        t.map((x) => x.after),
      ),
      ...eventMarks(t, f),
      eventKey(f),
    ].join('\n'),
  );
}

/** A dot where the number of cleared results changed, a triangle where compaction ran. */
function eventMarks(t: SessionTimeline['turns'], f: Frame): string[] {
  return t.flatMap((x, i) => {
    const cx = f.x(i + 1).toFixed(1);
    const out: string[] = [];
    if (x.cleared > 0 && (i === 0 || t[i - 1].cleared !== x.cleared))
      out.push(
        `<circle class="clearing" cx="${cx}" cy="${f.y(x.after).toFixed(1)}" r="3" fill="#59a14f"><title>turn ${i + 1}: ${x.cleared} results cleared</title></circle>`,
      );
    if (x.compacted)
      out.push(
        `<path class="compaction" d="M${cx},${f.y(x.after).toFixed(1)} l-5,-9 h10 z" fill="#e15759"><title>turn ${i + 1}: compacted</title></path>`,
      );
    return out;
  });
}

/** The key beside the plot: what each colour and marker means. */
function eventKey(f: Frame): string {
  return [
    ['#bab0ac', 'history before projection'],
    ['#4e79a7', 'request sent'],
    ['#59a14f', '● clearing changed'],
    ['#e15759', '▼ compaction'],
  ]
    .map(
      ([c, label], i) =>
        `<text x="${f.right + 6}" y="${f.top + 8 + i * 16}" font-size="11" fill="${c}">${xml(label)}</text>`,
    )
    .join('\n');
}
