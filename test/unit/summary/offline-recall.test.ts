import { afterAll, describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { findEvidenceNeeds } from '#dev/replay/evidence.js';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { readSessionFile } from '#src/formats/index.js';
import type { Message } from '#src/messages/message.js';
import { createOfflineSummarizer, rebuildHistory } from '#src/summary/index.js';
import { rawDir } from '#support/paths.js';

// What the offline summarizer keeps for later turns: the facts an agent used after the
// result that showed them would have been compacted (the retention pilot's evidence metric,
// dev/replay/evidence.ts, is the independent judge of "used").

afterAll(freeEncoders);
const est = createEstimator();
const summarizer = createOfflineSummarizer({ estimator: est });

function corpus(): Array<{ name: string; messages: Message[] }> {
  const out: Array<{ name: string; messages: Message[] }> = [];
  for (const dir of readdirSync(rawDir).sort())
    for (const f of readdirSync(join(rawDir, dir)).sort())
      for (const s of readSessionFile(join(rawDir, dir, f)).sessions)
        out.push({ name: f, messages: s.messages });
  return out;
}
const sessions = corpus();
const session = (prefix: string): Message[] => sessions.find((s) => s.name.startsWith(prefix))!.messages;
const summaryOf = async (messages: readonly Message[], maxOutputTokens?: number) =>
  summarizer.summarize({
    model: 'x',
    messages: [...messages],
    instructions: '',
    ...(maxOutputTokens ? { maxOutputTokens } : {}),
  });
const section = (text: string, name: string) => text.split(`## ${name}`)[1].split('\n## ')[0];

describe('§14 offline summarizer keeps what the agent later uses (real sessions)', () => {
  it('§14: a summary of the history before a turn carries a fact the turn used from a result 20+ messages back, for most such needs', async () => {
    let needs = 0;
    let carried = 0;
    for (const s of sessions) {
      // Every third far-back need with a fact, at most six per session (bounded test time).
      const picks = [...findEvidenceNeeds(s.messages).entries()]
        .flatMap(([turn, list]) =>
          list.filter((n) => n.facts.length > 0 && turn - n.result >= 20).map((n) => ({ turn, n })),
        )
        .filter((_, i) => i % 3 === 0)
        .slice(0, 6);
      for (const { turn, n } of picks) {
        const r = await summaryOf(s.messages.slice(0, turn));
        needs++;
        if (n.facts.some((f) => r.text.includes(f))) carried++;
      }
    }
    // Measured 13 of 19 (the earlier summarizer carried 0 of them).
    expect(needs).toBeGreaterThanOrEqual(15);
    expect(carried / needs).toBeGreaterThanOrEqual(0.6);
  });

  it('§14: identifiers and definition lines read long before are carried (django-16560, django-12276, sphinx-9258)', async () => {
    const django = await summaryOf(session('django__django-16560').slice(0, 168));
    expect(django.text).toContain('`model_class_pk`');
    expect(django.text).toContain('`_get_pk_val`');
    expect((await summaryOf(session('django__django-16560').slice(0, 236))).text).toContain(
      '`def clone(self):`',
    );
    const widgets = await summaryOf(session('django__django-12276').slice(0, 38));
    expect(widgets.text).toContain('`454:    def use_required_attribute(self, initial):`');
    const sphinx = await summaryOf(session('sphinx-doc__sphinx-9258').slice(0, 80));
    expect(section(sphinx.text, 'Files read')).toContain('_parse_arglist');
  });

  it('§14/L8: the failing test name and its exact error line are kept (sphinx-9258)', async () => {
    const r = await summaryOf(session('sphinx-doc__sphinx-9258'));
    expect(section(r.text, 'Failed')).toContain(
      "`pytest tests/test_domain_py.py::test_domain_py_xrefs -vv` → exit 1: E AssertionError: The node[reftarget] is not 'int': 'x'",
    );
    expect(section(r.text, 'Errors')).toContain(
      "- FAILED tests/test_domain_py.py::test_domain_py_xrefs - AssertionError: The node[reftarget] is not 'int': 'x'",
    );
  });

  it('§14: sed scripts are not listed as modified files (sphinx-9258)', async () => {
    const modified = section((await summaryOf(session('sphinx-doc__sphinx-9258'))).text, 'Files modified');
    expect(modified).toContain('- sphinx/domains/python.py');
    expect(modified).not.toMatch(/^- (?:s\/|\d+r |\/def )/m);
  });

  it('§14: a second compaction states each restriction, request and the last assistant message once', async () => {
    const all = session('sphinx-doc__sphinx-9258');
    const first = await summaryOf(all.slice(0, 100));
    const rebuilt = rebuildHistory(all.slice(0, 100), first.text, {
      estimator: est,
      continuityTailTokens: 4_000,
      capacity: null,
    });
    const second = await summaryOf([...rebuilt.history, ...all.slice(100, 140)]);
    const lines = second.text.split('\n').filter((l) => l.startsWith('- '));
    const restriction = '- "Avoid interactive tools like vi, nano, or any that require user input"';
    expect(lines.filter((l) => l === restriction)).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('- Last assistant message'))).toHaveLength(1);
    const facts = lines.filter((l) => !l.startsWith('- …') && l !== '- (none)');
    expect(new Set(facts).size).toBe(facts.length);
  });

  it('§14: every real session gets a summary smaller than its input and within the budget', async () => {
    let checked = 0;
    for (const s of sessions) {
      const input = est.history(s.messages);
      for (const budget of [4_096, 1_500]) {
        const r = await summaryOf(s.messages, budget);
        expect(est.text(r.text)).toBeLessThanOrEqual(budget);
        // Inputs under twice the template's floor (about 500 tokens) cannot be summarized smaller.
        if (input < 600) continue;
        expect(r.finishReason).toBe('stop');
        expect(est.text(r.text)).toBeLessThan(input);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(30);
  });
});
