import { afterAll, describe, expect, it } from '@jest/globals';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { msg, textOf } from '#src/messages/message.js';
import { KEPT_RULES_HEADER, previewMessage } from '#src/summary/preview.js';

afterAll(freeEncoders);

const est = createEstimator();
const filler = (tag: string) =>
  Array.from({ length: 120 }, (_, i) => `${tag} context line ${i} about the repository layout.`).join('\n');
const RULE = "Never edit files under vendor/ and don't run the full test suite.";
const long = `${filler('head')}\n${RULE}\n${filler('tail')}`;

describe("a preview of a user's message keeps the rules it states", () => {
  it("L2: a user's rule from the cut middle is kept under its own line; the preview still fits", () => {
    const m = msg.user(long);
    const budget = 600;
    const preview = previewMessage(m, budget, est);
    const text = textOf(preview.content);
    expect(text).toContain('tokens elided by compactor');
    expect(text).toContain(`${KEPT_RULES_HEADER}\n- ${RULE}`);
    expect(est.message(preview)).toBeLessThanOrEqual(budget);
  });

  it('L2: a tool result is previewed head and tail only (its sentences are output, not rules)', () => {
    const preview = previewMessage(msg.tool('c1', long, 'bash'), 600, est);
    expect(textOf(preview.content)).not.toContain(KEPT_RULES_HEADER);
    expect(textOf(preview.content)).not.toContain(RULE);
  });
});
