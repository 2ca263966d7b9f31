import { afterAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { textOf, type Message } from '#src/messages/message.js';
import { recallIdOf } from '#src/projection/recall-ids.js';
import { SPAN_NOT_FOUND } from '#src/projection/recall.js';
import { spanIndexOf } from '#src/projection/recall-spans.js';
import { createCompactorSession } from '#src/session/index.js';
import { createOfflineSummarizer } from '#src/summary/index.js';
import { pointerLineCap, POINTER_HEADING } from '#src/summary/span-pointers.js';
import { isSummaryMessage } from '#src/summary/summary-message.js';
import { agentSession } from '#support/cli-sessions.js';
import { sessionDirs } from '#support/session/fixtures.js';

afterAll(freeEncoders);

const estimator = createEstimator();
const tempDir = sessionDirs();
const CAPACITY = 16_000;

function open(history: readonly Message[], sessionDir?: string) {
  return createCompactorSession({
    history: [...history],
    limits: { capacity: CAPACITY },
    estimator,
    summarizer: createOfflineSummarizer({ estimator }),
    ...(sessionDir === undefined ? {} : { sessionDir }),
  });
}

const summaryOf = (history: readonly Message[]) => history.filter(isSummaryMessage).at(-1)!;
const pointerIds = (summary: Message) =>
  textOf(summary.content)
    .split('\n')
    .flatMap((l) => /^- (r-[0-9a-f]{8}) /.exec(l)?.[1] ?? []);
const spanIdIn = (summary: Message) => /^- (s-[0-9a-f]{8}) /m.exec(textOf(summary.content))?.[1];

/** The tool results of `before` the compacted history no longer holds verbatim. */
function replacedResults(before: readonly Message[], after: readonly Message[]): Message[] {
  const kept = new Set(after.map((m) => JSON.stringify(m)));
  return before.filter((m) => m.role === 'tool' && !kept.has(JSON.stringify(m)));
}

describe('a summary names every tool result it replaced (recall ids and span ids)', () => {
  it('R1: the summary shows the newest results one pointer line each, up to the cap, and a span id whose list names every result it replaced', async () => {
    const history = agentSession(40, 1_600, 400);
    const s = open(history);
    expect((await s.compact()).status).toBe('compacted');
    const summary = summaryOf(s.history);
    const text = textOf(summary.content);
    expect(text).toContain(POINTER_HEADING);
    const shown = pointerIds(summary);
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThanOrEqual(pointerLineCap(CAPACITY));
    const replaced = replacedResults(history, s.history);
    // More results were replaced than the summary shows: the span's list reaches the others.
    expect(replaced.length).toBeGreaterThan(shown.length);
    const span = spanIdIn(summary)!;
    expect(span).toMatch(/^s-[0-9a-f]{8}$/);
    const list = s.recall({ id: span });
    for (const r of replaced) {
      const id = recallIdOf(r);
      expect(list).toContain(id);
      // The id resolves to the original, whole.
      expect(s.recall({ id }, [])).toBe(textOf(r.content));
    }
    // A pointer line names the tool, the command and the size.
    expect(text).toMatch(/^- r-[0-9a-f]{8} bash: cat src\/file-\d+\.ts \(\d+ chars, \d+ lines\)$/m);
    s.close();
  });

  it('R1: the same history compacts to the same span id and the same pointer lines on every run', async () => {
    const history = agentSession(40, 1_600, 400);
    const texts: string[] = [];
    for (let run = 0; run < 2; run++) {
      const s = open(JSON.parse(JSON.stringify(history)) as Message[]);
      await s.compact();
      texts.push(textOf(summaryOf(s.history).content));
      s.close();
    }
    expect(texts[1]).toBe(texts[0]);
    expect(spanIdIn({ role: 'user', content: texts[0] })).toBeDefined();
  });

  it('R1: a second summary lists the results of the first one too, so one recall reaches either', async () => {
    const history = agentSession(40, 1_600, 400);
    const s = open(history.slice(0, 50));
    await s.compact();
    const first = summaryOf(s.history);
    const firstList = s.recall({ id: spanIdIn(first)! });
    s.append(...history.slice(50));
    await s.compact();
    const second = summaryOf(s.history);
    const index = spanIndexOf(second)!;
    expect(index.earlier).toEqual([spanIdIn(first)]);
    const all = s.recall({ id: spanIdIn(second)!, range: { start: 1, end: 1_000 } });
    for (const id of firstList.match(/r-[0-9a-f]{8}/g)!) expect(all).toContain(id);
    s.close();
  });

  it('R1: the span index is kept with the compaction boundary and answers after a restart', async () => {
    const dir = tempDir();
    const history = agentSession(40, 1_600, 400);
    const s = open(history, dir);
    await s.compact();
    const span = spanIdIn(summaryOf(s.history))!;
    const list = s.recall({ id: span });
    s.close();
    const events = readFileSync(join(dir, 'events.jsonl'), 'utf8');
    const boundary = events.split('\n').find((l) => l.includes('"thread.compact_boundary"'))!;
    expect(boundary).toContain(`"recallSpan":{"id":"${span}"`);
    const again = open(history, dir);
    expect(again.recall({ id: span })).toBe(list);
    const some = list.match(/r-[0-9a-f]{8}/g)!.at(-1)!;
    const original = history.find((m) => m.role === 'tool' && recallIdOf(m) === some)!;
    expect(again.recall({ id: some }, [])).toBe(textOf(original.content));
    again.close();
  });

  it('R1: a span id no summary holds is answered in one line; range pages through a long list', async () => {
    const s = open(agentSession(40, 1_600, 400));
    expect(s.recall({ id: 's-00000000' })).toBe(`${SPAN_NOT_FOUND} s-00000000 in this session`);
    await s.compact();
    const span = spanIdIn(summaryOf(s.history))!;
    const page = s.recall({ id: span, range: { start: 2, end: 3 } }).split('\n');
    expect(page[0]).toMatch(new RegExp(`^${span}: results 2-3 of \\d+ \\(give range for others\\)`));
    expect(page.slice(1)).toHaveLength(2);
    const whole = s.recall({ id: span, range: { start: 1, end: 1_000 } }).split('\n');
    expect(whole.slice(1).slice(1, 3)).toEqual(page.slice(1));
    s.close();
  });
});
