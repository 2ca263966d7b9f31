import { afterEach, describe, expect, it } from '@jest/globals';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { msg } from '#src/messages/message.js';
import { EVENTS_FILE, loadEventLog, openSessionStore } from '#src/store/index.js';

/**
 * A write's commit line can keep a small note of its writer (a session's carry): the log reads
 * back the last committed one with the number of events before it, and a note on a write a
 * crash cut short is not read.
 */

const dirs: string[] = [];
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'compactor-commit-carry-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('a note kept on a commit line', () => {
  it('R2: is read back as the last committed note with the events before it, also when written without events', async () => {
    const dir = fresh();
    const store = openSessionStore(dir);
    expect(store.keptCarry()).toBeUndefined();
    store.appendMessages([msg.user('a'), msg.assistant('b')], { carry: { n: 1 } });
    await store.appendMessagesSyncingLater([msg.user('c')], { n: 2 });
    expect(store.keptCarry()).toEqual({ events: 3, carry: { n: 2 } });
    await store.appendMessagesSyncingLater([], { n: 3 });
    store.appendMessages([msg.user('d')]); // a write without a note keeps the last one
    expect(store.keptCarry()).toEqual({ events: 3, carry: { n: 3 } });
    store.close();
    const again = openSessionStore(dir);
    expect(again.keptCarry()).toEqual({ events: 3, carry: { n: 3 } });
    expect(again.events()).toHaveLength(4);
    again.close();
  });

  it('R2: a held write keeps its note with its commit; a rolled back one keeps none', () => {
    const dir = fresh();
    const store = openSessionStore(dir);
    store.appendMessages([msg.user('a')], { commit: false });
    store.rollback();
    store.commit({ n: 0 }); // nothing held: no write, no note
    expect(store.keptCarry()).toBeUndefined();
    store.appendMessages([msg.user('b')], { commit: false });
    store.commit({ n: 1 });
    const before = store.loadHistory();
    const boundary = store.recordCompaction({
      before,
      after: [msg.user('summary')],
      mode: 'local',
      reason: 'manual',
      strategy: 'local',
      carry: { n: 2 },
    });
    expect(store.keptCarry()).toEqual({ events: 2, carry: { n: 2 } });
    store.close();
    expect(loadEventLog(join(dir, EVENTS_FILE)).carry).toEqual({ events: boundary.seq, carry: { n: 2 } });
  });

  it('R2: a note on a write cut short is not read; the one before it is', () => {
    const dir = fresh();
    const store = openSessionStore(dir);
    store.appendMessages([msg.user('a')], { carry: { n: 1 } });
    store.close();
    const file = join(dir, EVENTS_FILE);
    const whole = readFileSync(file, 'utf8');
    appendFileSync(file, '{"commit":1,"carry":{"n":2},"crc":"0000'); // torn last line
    expect(loadEventLog(file).carry).toEqual({ events: 1, carry: { n: 1 } });
    const again = openSessionStore(dir);
    expect(again.keptCarry()).toEqual({ events: 1, carry: { n: 1 } });
    again.close();
    expect(readFileSync(file, 'utf8')).toBe(whole);
  });

  it('R2: a queued store keeps the notes in order with its writes', async () => {
    const dir = fresh();
    const store = openSessionStore(dir, { queued: true });
    await store.appendMessagesSyncingLater([msg.user('a')], { n: 1 });
    await store.appendMessagesSyncingLater([], { n: 2 });
    await store.flush?.();
    store.close();
    expect(loadEventLog(join(dir, EVENTS_FILE)).carry).toEqual({ events: 1, carry: { n: 2 } });
  });
});
