import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { readSessionFile } from '#src/formats/index.js';
import { msg, type Message } from '#src/messages/message.js';
import { createCompactorSession } from '#src/session/index.js';
import { memoryStore, openSessionStore } from '#src/store/index.js';
import { sessionDirs } from '#support/session/fixtures.js';
import { expectKeptCopy, jsonWithProtoKeys, protoKeyMessage } from '#support/proto-keys.js';

/**
 * A message whose JSON fields hold keys named `__proto__` is stored and read back as it was
 * appended: through a session directory, a memory store whose records went through JSON, and
 * the full-history artifact of a compaction.
 */

afterAll(freeEncoders);
const tempDir = sessionDirs();
const estimator = createEstimator({ encoding: 'chars' });
// Long enough that a manual compaction replaces it.
const django: Message[] = readSessionFile('examples/sessions/django__django-16560.traj.json').sessions[0]!
  .messages;

describe('keys named __proto__ through the store (R1, D1)', () => {
  it('R1: appended to a session directory, they come back on reopening, every object plain', () => {
    const dir = tempDir();
    const m = protoKeyMessage();
    const s = createCompactorSession({ sessionDir: dir, history: [msg.user('task')], estimator });
    s.append(m);
    expectKeptCopy(s.history[1], m);
    s.close();
    const again = createCompactorSession({ sessionDir: dir, estimator });
    expect(again.history).toHaveLength(2);
    expectKeptCopy(again.history[1], m);
    again.close();
  });

  it('R1: a memory store whose records went through JSON keeps them, in a compaction’s artifact too', async () => {
    const store = memoryStore();
    const m = protoKeyMessage();
    const s = createCompactorSession({ store, history: [...django, m], estimator });
    expect((await s.compact()).status).toBe('compacted');
    s.append(m);
    s.close();

    const again = memoryStore(JSON.parse(JSON.stringify(store.records())));
    const t = createCompactorSession({ store: again, estimator });
    expectKeptCopy(t.history.at(-1), m);
    const [boundary] = t.store!.listBoundaries();
    expectKeptCopy(t.store!.restoreAt(boundary!.id).at(-1), m);
    t.close();
  });

  it('R1: on random metadata with them, append → store → reload gives the message back exactly', () => {
    const dir = tempDir();
    let n = 0;
    fc.assert(
      fc.property(
        jsonWithProtoKeys.object,
        fc.array(jsonWithProtoKeys.json, { maxLength: 2 }),
        (meta, details) => {
          const m = msg.user(`m${n++}`, { reasoningDetails: details, metadata: meta });
          const store = openSessionStore(dir);
          store.appendMessages([m]);
          store.close();
          const back = openSessionStore(dir);
          const history = back.loadHistory();
          back.close();
          expectKeptCopy(history.at(-1), m);
        },
      ),
      { numRuns: 60 },
    );
  });
});
