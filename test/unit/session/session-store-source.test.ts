import { afterAll, describe, expect, it } from '@jest/globals';
import { CompactorOptionsError, UserError } from '#src/core/errors.js';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { readSessionFile } from '#src/formats/index.js';
import { msg, type Message } from '#src/messages/message.js';
import { createCompactorSession } from '#src/session/index.js';
import { memoryStore } from '#src/store/index.js';
import { sessionDirs } from '#support/session/fixtures.js';

afterAll(freeEncoders);
const tempDir = sessionDirs();
// Long enough that a manual compaction replaces it; counted in characters to stay fast.
const django: Message[] = readSessionFile('examples/sessions/django__django-16560.traj.json').sessions[0]!
  .messages;
const estimator = createEstimator({ encoding: 'chars' });

describe('a session over a store source other than a directory', () => {
  it('R1: a memory store records messages and a compaction; its records continue the session elsewhere', async () => {
    const store = memoryStore();
    const s = createCompactorSession({ store, history: django, estimator });
    const report = await s.compact();
    expect(report.status).toBe('compacted');
    s.append(msg.user('next step'));
    s.close();
    const records = store.records();
    expect(records.events.filter((e) => e.type === 'thread.compact_boundary')).toHaveLength(1);

    // The records went through JSON (as they do in a remote store) and open as the same session.
    const again = memoryStore(JSON.parse(JSON.stringify(records)));
    const t = createCompactorSession({ store: again, estimator });
    expect(t.history).toEqual(s.history);
    const [boundary] = t.store!.listBoundaries();
    expect(t.store!.restoreAt(boundary!.id)).toEqual(django);
    expect(t.store!.loadSnapshot('compaction')).toMatchObject({ status: 'compacted', mode: 'manual' });
  });

  it('R1: with onSuccess writes, messages held back are not in the records until the run commits them', async () => {
    const store = memoryStore();
    const s = createCompactorSession({ store, history: [msg.user('a')], storeWrites: 'onSuccess' });
    s.append(msg.user('b'));
    expect(store.records().events).toHaveLength(0);
    await s.runTurn();
    expect(store.records().events).toHaveLength(2);
  });

  it('R2: one writer at a time: a second session on an open memory store is refused', () => {
    const store = memoryStore();
    createCompactorSession({ store });
    expect(() => createCompactorSession({ store })).toThrow(/already has a writer/);
  });

  it('D3: records from outside are validated (one line naming the field); store and sessionDir exclude each other', () => {
    expect(() => memoryStore({ events: [{ type: 'nope' }], artifacts: {}, snapshots: {} })).toThrow(
      UserError,
    );
    expect(() => memoryStore({ events: [], artifacts: {} })).toThrow(/^memoryStore: records\.snapshots: /);
    expect(() => createCompactorSession({ store: memoryStore(), sessionDir: tempDir() })).toThrow(
      CompactorOptionsError,
    );
    expect(() => createCompactorSession({ store: {} as never })).toThrow(/options\.store: /);
  });
});
