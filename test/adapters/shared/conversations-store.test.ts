import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConversations } from '#src/adapters/shared/conversations.js';
import { freeEncoders } from '#src/estimate/index.js';
import { msg, textOf } from '#src/messages/message.js';

afterAll(freeEncoders);
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), 'compactor-conversation-store-'));
  dirs.push(dir);
  return dir;
};

describe('conversations on queued stores (R1)', () => {
  it('R1: the sync point is saved once, then the store tells it; a new process continues from both without adding a message twice', async () => {
    const sessionDir = fresh();
    const file = join(sessionDir, 'talk.sync.json');
    const turns = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        i % 2 === 0 ? msg.user(`question ${i}`) : msg.assistant(`answer ${i}`),
      );
    const first = createConversations({ sessionDir, limits: { capacity: 50_000 } });
    await first.project({ conversationId: 'talk', messages: turns(1) });
    const saved = readFileSync(file, 'utf8');
    await first.project({ conversationId: 'talk', messages: turns(3) });
    await first.project({ conversationId: 'talk', messages: turns(5) });
    // The point on disk still says one message; the store holds all five.
    expect(readFileSync(file, 'utf8')).toBe(saved);
    first.close();
    const second = createConversations({ sessionDir, limits: { capacity: 50_000 } });
    const next = await second.project({ conversationId: 'talk', messages: turns(7) });
    expect(next.session.history.map((m) => textOf(m.content))).toEqual(
      turns(7).map((m) => textOf(m.content)),
    );
    const recorded = next.session.store!.events().filter((e) => e.type === 'message.appended');
    expect(recorded).toHaveLength(7);
    second.close();
  });
});
