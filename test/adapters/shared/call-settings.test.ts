import { afterAll, describe, expect, it } from '@jest/globals';
import { createConversations } from '#src/adapters/shared/conversations.js';
import { CompactorError } from '#src/core/errors.js';
import { freeEncoders } from '#src/estimate/index.js';
import { msg, textOf, type Message } from '#src/messages/message.js';

afterAll(freeEncoders);

/** A coding loop of `n` file reads, each result about 600 tokens. */
function loop(n: number): Message[] {
  const out: Message[] = [msg.user('Fix the parser.')];
  for (let i = 0; i < n; i++) {
    out.push(msg.assistant('', [{ id: `c${i}`, name: 'read_file', arguments: `{"path":"src/m${i}.ts"}` }]));
    out.push(
      msg.tool(`c${i}`, `export const v${i} = ${i};\n${'// a line of source\n'.repeat(120)}`, 'read_file'),
    );
  }
  return out;
}

const stubs = (messages: readonly Message[]) =>
  messages.filter((m) => m.role === 'tool' && textOf(m.content).startsWith('{"cleared"')).length;

describe('a per-call setting of an open conversation applies or is refused', () => {
  it('C1/P1: a call that turns clearing on for an open conversation applies it from that call on', async () => {
    const conversations = createConversations({ limits: { capacity: 50_000 } });
    const off = { enabled: false, triggerTokens: 1_000 };
    const first = await conversations.project({ conversationId: 'c', messages: loop(8), policy: off });
    expect(stubs(first.request)).toBe(0);
    expect(first.session.config.policy.enabled).toBe(false);

    const on = { enabled: true, triggerTokens: 1_000, clearAtLeast: 0 };
    const second = await conversations.project({ conversationId: 'c', messages: loop(9), policy: on });
    expect(second.session).toBe(first.session);
    expect(second.session.config.policy.enabled).toBe(true);
    expect(stubs(second.request)).toBeGreaterThan(0);
  });

  it('B2: a call that reserves more output for its answer shrinks the prompt budget of the open conversation', async () => {
    const conversations = createConversations({ limits: { capacity: 50_000 } });
    const first = await conversations.project({
      conversationId: 'c',
      messages: loop(2),
      limits: { reservedOutput: 1_000 },
    });
    const before = first.session.config.turn.promptBudgetTokens;
    await conversations.project({
      conversationId: 'c',
      messages: loop(3),
      limits: { reservedOutput: 9_000 },
    });
    expect(before).toBe(49_000);
    expect(first.session.config.turn.promptBudgetTokens).toBe(41_000);
    expect(Object.isFrozen(first.session.config.limits)).toBe(true);
  });

  it('D3: a call with an invalid setting is refused with one line naming it, and the conversation keeps its settings', async () => {
    const conversations = createConversations({ limits: { capacity: 50_000 } });
    const first = await conversations.project({ conversationId: 'c', messages: loop(2) });
    const bad = conversations.project({
      conversationId: 'c',
      messages: loop(3),
      policy: { keepToolUses: -1 },
    });
    const error = await bad.then(
      () => null,
      (e: unknown) => e,
    );
    expect(CompactorError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/^configure: settings\.policy\.keepToolUses: /);
    expect((error as Error).message).not.toContain('\n');
    expect(first.session.config.policy.keepToolUses).not.toBe(-1);
    const again = await conversations.project({ conversationId: 'c', messages: loop(3) });
    expect(again.request.length).toBeGreaterThan(first.request.length);
  });
});
