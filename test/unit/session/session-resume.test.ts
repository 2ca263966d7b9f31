import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  createCompactorSession as createSession,
  createEstimator,
  freeEncoders,
  msg,
  openSessionRecords,
  StoredSessionConflictError,
  type Message,
} from '#src/index.js';
import { readSessionFile } from '#src/entries/formats.js';
import type { SummaryClient } from '#src/entries/providers.js';
import { sessionDirs } from '#support/session/fixtures.js';

// Continuing a stored session through the package entry, as a library user would.
afterAll(freeEncoders);
const tempDir = sessionDirs();
// These tests are about what is stored, not about token counts: the chars estimator keeps the
// 480 KB session from being tokenized again in every test.
const estimator = createEstimator({ encoding: 'chars' });
const createCompactorSession: typeof createSession = (options = {}) =>
  createSession({ estimator, ...options });
// A real session: long enough that a manual compaction replaces its history.
const first: Message[] = readSessionFile('examples/sessions/django__django-16560.traj.json').sessions[0]!
  .messages;
const grown: Message[] = [...first, msg.user('Now add a test for subtraction.'), msg.assistant('Added it.')];
const recordedMessages = (dir: string) =>
  openSessionRecords(dir)
    .events()
    .filter((e) => e.type === 'message.appended').length;
const eventsOf = (dir: string) => readFileSync(join(dir, 'events.jsonl'));
/** A caller's summary model that always fails (the compaction then fails and keeps the history). */
const failing: SummaryClient = {
  provider: 'caller',
  model: 'broken',
  summarize: () => Promise.reject(new Error('the caller model is down')),
};

describe('continuing a stored session from the library (R1)', () => {
  it('R1: a history that starts with the recorded messages continues the session: only the rest is stored, the live history is the stored one', async () => {
    const dir = tempDir();
    const s1 = createCompactorSession({ sessionDir: dir, history: first });
    const compacted = await s1.compact();
    expect(compacted.status).toBe('compacted');
    const live = s1.history;
    s1.close();

    const s2 = createCompactorSession({ sessionDir: dir, history: grown });
    expect(s2.resumedFrom).toBe(first.length);
    // The stored (compacted) history plus the two new messages, not the whole transcript again.
    expect(s2.history).toEqual([...live, ...grown.slice(first.length)]);
    s2.close();
    expect(recordedMessages(dir)).toBe(grown.length);

    // Without a history the stored session is simply reopened.
    const s3 = createCompactorSession({ sessionDir: dir });
    expect(s3.resumedFrom).toBe(grown.length);
    expect(s3.history).toEqual([...live, ...grown.slice(first.length)]);
    s3.close();
  });

  it('R1: a different history is refused naming the directory; startOver moves the old records to previous/ and starts anew', () => {
    const dir = tempDir();
    createCompactorSession({ sessionDir: dir, history: first }).close();
    const before = eventsOf(dir);
    const other = [msg.user('a different task')];
    let error: unknown;
    try {
      createCompactorSession({ sessionDir: dir, history: other });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StoredSessionConflictError);
    expect((error as StoredSessionConflictError).dir).toBe(dir);
    expect((error as Error).message).toContain(
      `already holds a different session (recorded message 1 of ${first.length} `,
    );
    expect(eventsOf(dir)).toEqual(before);

    const fresh = createCompactorSession({ sessionDir: dir, history: other, startOver: true });
    expect(fresh.history).toEqual(other);
    fresh.close();
    const [old] = readdirSync(join(dir, 'previous'));
    expect(readFileSync(join(dir, 'previous', old!, 'events.jsonl'))).toEqual(before);
    expect(recordedMessages(dir)).toBe(1);
  });

  it('R1: a directory that holds other files and no session is refused', () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    expect(() => createCompactorSession({ sessionDir: dir, history: first })).toThrow(
      /holds other files \(notes.txt\) and no session; use a new or empty directory/,
    );
    expect(existsSync(join(dir, 'events.jsonl'))).toBe(false);
  });
});

describe("storeWrites 'onSuccess': a run commits all or nothing (R1)", () => {
  it('R1: a failed compaction leaves the directory as it was and the history as stored', async () => {
    const dir = tempDir();
    createCompactorSession({ sessionDir: dir, history: first }).close();
    const before = eventsOf(dir);
    const s = createCompactorSession({
      sessionDir: dir,
      history: grown,
      storeWrites: 'onSuccess',
      summarizer: failing,
    });
    expect(s.history).toHaveLength(grown.length);
    const report = await s.compact();
    expect(report.status).toBe('failed');
    expect(report.boundary).toBeNull();
    expect(s.history).toEqual(first);
    s.close();
    expect(eventsOf(dir)).toEqual(before);
  });

  it('R1: beforeCommit runs before anything is committed; when it throws nothing is, and the error reaches the caller', async () => {
    const dir = tempDir();
    createCompactorSession({ sessionDir: dir, history: first }).close();
    const before = eventsOf(dir);
    const s = createCompactorSession({ sessionDir: dir, history: grown, storeWrites: 'onSuccess' });
    const seen: string[] = [];
    await expect(
      s.compact({
        beforeCommit: (outcome) => {
          seen.push(outcome.status);
          throw new Error('output directory vanished');
        },
      }),
    ).rejects.toThrow('output directory vanished');
    expect(seen).toEqual(['compacted']);
    expect(eventsOf(dir)).toEqual(before);
    expect(s.history).toEqual(first);

    // The same pass with a beforeCommit that passes commits the new messages and the boundary.
    s.append(...grown.slice(first.length));
    let recordedDuring = -1;
    const report = await s.compact({
      beforeCommit: () => {
        recordedDuring = recordedMessages(dir);
      },
    });
    expect(recordedDuring).toBe(first.length);
    expect(report.boundary).not.toBeNull();
    s.close();
    expect(recordedMessages(dir)).toBe(grown.length);
    expect(openSessionRecords(dir).listBoundaries()).toHaveLength(1);
  });

  it('R1: a turn below the threshold commits the held messages once it returns; closing first drops them', async () => {
    const dir = tempDir();
    const options = {
      sessionDir: dir,
      history: first,
      storeWrites: 'onSuccess',
      limits: { capacity: 1_000_000 },
    } as const;
    const dropped = createCompactorSession(options);
    dropped.close();
    expect(recordedMessages(dir)).toBe(0);

    const s = createCompactorSession(options);
    const turn = await s.runTurn({ beforeCommit: () => expect(recordedMessages(dir)).toBe(0) });
    expect(turn.decision).toBe('below-threshold');
    s.close();
    expect(recordedMessages(dir)).toBe(first.length);
  });
});

describe('one writer per session directory (R2)', () => {
  it('R2: a second session on a directory fails at once naming the holder; a reader still reads it', () => {
    const dir = tempDir();
    const holder = createCompactorSession({ sessionDir: dir, history: first });
    try {
      expect(() => createCompactorSession({ sessionDir: dir })).toThrow(
        new RegExp(`in use by process ${process.pid} on ${hostname()}`),
      );
      expect(openSessionRecords(dir).loadHistory()).toEqual(first);
    } finally {
      holder.close();
    }
    createCompactorSession({ sessionDir: dir, storeLock: { waitMs: 0 } }).close();
  });
});
