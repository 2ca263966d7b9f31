import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
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
  it('R1: the store tells the sync point, so none is saved (not even by the first call); a new process continues from the store without adding a message twice', async () => {
    const sessionDir = fresh();
    const file = join(sessionDir, 'talk.sync.json');
    const turns = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        i % 2 === 0 ? msg.user(`question ${i}`) : msg.assistant(`answer ${i}`),
      );
    const first = createConversations({ sessionDir, limits: { capacity: 50_000 } });
    await first.project({ conversationId: 'talk', messages: turns(1) });
    await first.project({ conversationId: 'talk', messages: turns(3) });
    await first.project({ conversationId: 'talk', messages: turns(5) });
    // No point on disk: the store holds all five, one for each message of the list.
    expect(existsSync(file)).toBe(false);
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
