import { afterAll, describe, expect, it } from '@jest/globals';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { textOf, type Message } from '#src/messages/message.js';
import type { SummaryClient, SummaryRequest } from '#src/providers/types.js';
import { createCompactorSession } from '#src/session/index.js';
import { createOfflineSummarizer } from '#src/summary/index.js';
import { isSummaryMessage } from '#src/summary/summary-message.js';
import { RECALL_NOT_FOUND } from '#src/projection/recall.js';
import type { Receipt } from '#src/summary/receipt.js';
import { agentSession } from '#support/cli-sessions.js';

afterAll(freeEncoders);

const estimator = createEstimator();

/** A session whose replaced span holds a later request, a correction, a failed command and ids. */
function session(): Message[] {
  const history = agentSession(24, 1_600, 700, 8);
  history.splice(
    20,
    0,
    { role: 'user', content: "No, don't edit the lockfile; keep commit 3f9c2ab41d as the base." },
    {
      role: 'assistant',
      content: 'Running the tests.',
      toolCalls: [
        { id: 'call_t', name: 'bash', arguments: JSON.stringify({ command: 'npm test -- parser' }) },
      ],
    },
    {
      role: 'tool',
      toolCallId: 'call_t',
      toolName: 'bash',
      content: 'Error: parser.spec.ts failed\nexit code 1',
    },
  );
  return history;
}

/** A session whose replaced span holds more edits than a small window's pointer lines show. */
function editSession(): Message[] {
  const history = session();
  const edits = Array.from({ length: 16 }, (_, k): Message[] => [
    {
      role: 'assistant',
      content: `Renaming in module ${k}.`,
      toolCalls: [
        {
          id: `call_e${k}`,
          name: 'bash',
          arguments: JSON.stringify({ command: `sed -i 's/value/renamed${k}/' src/mod-${k}.ts` }),
        },
      ],
    },
    {
      role: 'tool',
      toolCallId: `call_e${k}`,
      toolName: 'bash',
      content: `edited src/mod-${k}.ts\nexit code 0`,
    },
  ]);
  history.splice(4, 0, ...edits.flat());
  return history;
}

type Defect = (text: string) => string;

/** The ways a summarizer gets a summary wrong. */
const DEFECTS: Record<string, Defect> = {
  'drops the failed test run': (text) =>
    text
      .split('\n')
      .filter((l) => !l.includes('npm test -- parser'))
      .join('\n'),
  // Cut before the failed run: a cut that loses only what the pointer lines name loses nothing.
  truncates: (text) => text.slice(0, Math.floor(text.length * 0.1)),
  'drops sections': (text) => text.split(/\n## /).slice(0, 2).join('\n## '),
  'answers an empty template': (text) =>
    text
      .split('\n')
      .filter((l) => l.startsWith('## '))
      .map((h) => `${h}\n- (none)`)
      .join('\n'),
};

/** The offline summarizer, its every answer passed through `defect`. */
function defective(defect: Defect | null): SummaryClient {
  const honest = createOfflineSummarizer({ estimator });
  return {
    ...honest,
    summarize: async (request: SummaryRequest, signal?: AbortSignal) => {
      const r = await honest.summarize(request, signal);
      return defect ? { ...r, text: defect(r.text) } : r;
    },
  };
}

async function compactWith(defect: Defect | null, capacity = 16_000, history = session()) {
  const s = createCompactorSession({
    history,
    limits: { capacity },
    summarizer: defective(defect),
  });
  const report = await s.compact();
  return { report, history: s.history, session: s };
}

/** What a receipt must find said in words, never only named by a recall id. */
const SAID: ReadonlySet<string> = new Set(['request', 'correction', 'error']);

/**
 * Every item is in `history` (what the next request is built from) verbatim, or, for a path, a
 * command or an id, on a line of the list the summary's span id returns, whose id resolves.
 */
function expectEveryItemReachable(
  receipt: Receipt,
  history: readonly Message[],
  s: { recall: (args: { id: string }, request?: Message[]) => string },
) {
  const all = history.map((m) =>
    [textOf(m.content), ...(m.toolCalls ?? []).map((c) => c.arguments)].join('\n'),
  );
  const folded = all.join('\n').replace(/\s+/g, ' ');
  for (const item of receipt.items) {
    if (item.place !== 'span') {
      expect(folded).toContain(item.key);
      continue;
    }
    expect(SAID.has(item.kind)).toBe(false);
    const { id, span } = item.recall!;
    expect(folded).toContain(`- ${span!} `);
    const line = s
      .recall({ id: span! })
      .split('\n')
      .find((l) => l.startsWith(`- ${id} `));
    expect(line?.replace(/\s+/g, ' ')).toContain(item.key);
    expect(s.recall({ id }, [])).not.toContain(RECALL_NOT_FOUND);
  }
}

describe('receipts: what the replaced span had to keep lands somewhere (R3)', () => {
  it('R3: an honest summary of a span split by a message sent while a tool ran needs no amending', async () => {
    const { report, history } = await compactWith(null, 200_000);
    expect(report.status).toBe('compacted');
    const receipt = report.receipt!;
    // The rebuild keeps the user's messages verbatim, so the span holds calls and results; its
    // reads (`cat`) are listed by their paths, not as commands.
    expect(receipt.items.map((i) => i.kind)).toEqual(expect.arrayContaining(['error', 'path']));
    expect(receipt.items.some((i) => i.kind === 'command')).toBe(false);
    // The summary's input held the whole span, the groups before the interleaved message too.
    expect(receipt.amended).toBe(0);
    expect(receipt.items.every((i) => i.place === 'summary' || i.place === 'kept')).toBe(true);
    const summary = textOf(history.find(isSummaryMessage)!.content);
    expect(summary).toContain('npm test -- parser');
    expect(summary).not.toContain('## Kept verbatim');
    expect(receipt.tokensAfter).toBeLessThan(receipt.tokensBefore);
  });

  it('R3: at 8k, paths and commands a terse summary and its pointer lines leave out are found on the list its span id returns: nothing is amended', async () => {
    // A model that keeps the goal, the rules, the failures and the plan, not every file and command.
    const terse: Defect = (text) =>
      text
        .split(/\n(?=## )/)
        .filter((part) => !/^## (?:Commands|Files)/.test(part))
        .join('\n');
    const { report, history, session: s } = await compactWith(terse, 8_000, editSession());
    expect(report.status).toBe('compacted');
    const receipt = report.receipt!;
    expect(receipt.items.filter((i) => i.place === 'pointer').length).toBeGreaterThan(0);
    expect(receipt.items.filter((i) => i.place === 'span').length).toBeGreaterThan(0);
    expect(receipt.amended).toBe(0);
    expect(textOf(history.find(isSummaryMessage)!.content)).not.toContain('## Kept verbatim');
    expectEveryItemReachable(receipt, history, s);
    s.close();
  });

  it('R3: a terse summary that also drops the failed run is mended at 8k: a pointer line or a span list never stands for an error', async () => {
    const drop: Defect = (text) =>
      text
        .split(/\n(?=## )/)
        .filter((part) => !/^## (?:Commands|Files|Failed|Errors|Completed|Plan)/.test(part))
        .join('\n');
    const { report, history, session: s } = await compactWith(drop, 8_000, editSession());
    const receipt = report.receipt!;
    const error = receipt.items.find((i) => i.kind === 'error')!;
    expect(error.place).toBe('amended');
    // The failed run is named by a recall id all the same: the words were what was missing.
    const named = (
      s.recall({ id: /^- (s-[0-9a-f]{8}) /m.exec(textOf(history.find(isSummaryMessage)!.content))![1] }) +
      textOf(history.find(isSummaryMessage)!.content)
    ).includes(`bash: ${error.key} → exit 1`);
    expect(named).toBe(true);
    expect(receipt.items.filter((i) => i.place === 'span').length).toBeGreaterThan(0);
    expectEveryItemReachable(receipt, history, s);
    s.close();
  });

  it('R3: a summary cut after its failed run loses only paths the pointer lines name: nothing is missing', async () => {
    const { report, history } = await compactWith((text) => text.slice(0, Math.floor(text.length * 0.3)));
    const receipt = report.receipt!;
    expect(receipt.amended).toBe(0);
    expect(receipt.items.find((i) => i.kind === 'error')?.place).toBe('summary');
    const pointed = receipt.items.filter((i) => i.place === 'pointer');
    expect(pointed.length).toBeGreaterThan(0);
    expect(pointed.every((i) => i.kind === 'path')).toBe(true);
    // Each pointed path is on a line of the summary that names a recall id.
    const summary = textOf(history.find(isSummaryMessage)!.content).split('\n');
    for (const item of pointed)
      expect(summary.some((l) => /^- r-[0-9a-f]{8} /.test(l) && l.includes(item.key))).toBe(true);
  });

  const cases = [16_000, 8_000].flatMap((capacity) =>
    Object.entries(DEFECTS).map(([name, defect]) => [name, capacity, defect] as const),
  );
  it.each(cases)(
    'R3: a summarizer that %s is caught and mended (%d window)',
    async (_name, capacity, defect) => {
      const { report, history, session: s } = await compactWith(defect, capacity);
      expect(report.status).toBe('compacted');
      const receipt = report.receipt!;
      expect(receipt.amended).toBeGreaterThan(0);
      expect(receipt.items.some((i) => i.place === 'amended')).toBe(true);
      expect(receipt.items.every((i) => i.place !== 'missing')).toBe(true);
      expectEveryItemReachable(receipt, history, s);
      s.close();
    },
  );
});
