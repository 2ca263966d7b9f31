import { describe, expect, it, jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  statSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { msg } from '#src/messages/message.js';
import { frameLine } from '#src/store/frame.js';
import { EVENTS_FILE, LOCK_FILE, openSessionStore } from '#src/store/index.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

const fresh = () => mkdtempSync(join(tmpdir(), 'compactor-records-'));
const texts = (dir: string) =>
  openSessionStore(dir, { create: false })
    .loadHistory()
    .map((m) => m.content);

describe('crash-safe records (R2)', () => {
  it('R2: a write cut off after whole records (no commit line) is not loaded as if complete', () => {
    const dir = fresh();
    const s = openSessionStore(dir);
    s.appendMessages([msg.user('a')]);
    s.close();
    const file = join(dir, EVENTS_FILE);
    const committed = statSync(file).size;
    const w = openSessionStore(dir);
    w.appendMessages([msg.user('b'), msg.user('c'), msg.user('d')]);
    w.close();
    // A crash inside the write: two of three records and half the commit line reached the disk.
    const full = readFileSync(file, 'utf8');
    const lines = full.split('\n');
    truncateSync(file, committed + lines[2]!.length + lines[3]!.length + 2 + 10);
    // A reader leaves the file alone and sees only the committed history.
    expect(texts(dir)).toEqual(['a']);
    const reader = openSessionStore(dir, { create: false });
    expect(reader.warnings()[0]!.message).toMatch(/unfinished write \(2 whole records and a cut-off line\)/);
    expect(existsSync(`${file}.corrupt`)).toBe(false);
    // The next writer moves the tail aside, says so in one line, and appends cleanly after it.
    const again = openSessionStore(dir);
    expect(again.warnings().map((x) => x.message)).toEqual([
      expect.stringMatching(/^\d+ bytes of an unfinished write .* aside to .*events\.jsonl\.corrupt$/),
    ]);
    expect(statSync(file).size).toBe(committed);
    again.appendMessages([msg.user('e')]);
    again.close();
    expect(texts(dir)).toEqual(['a', 'e']);
    expect(readFileSync(`${file}.corrupt`, 'utf8')).toContain('"content":"c"');
  });

  it('R2: uncommitted messages are dropped by rollback, leaving the log byte for byte as before', () => {
    const dir = fresh();
    const s = openSessionStore(dir);
    s.appendMessages([msg.user('a')]);
    const before = readFileSync(join(dir, EVENTS_FILE));
    s.appendMessages([msg.user('b')], { commit: false });
    expect(s.loadHistory()).toHaveLength(2);
    expect(s.rollback()).toBe(1);
    expect(s.loadHistory()).toEqual([msg.user('a')]);
    expect(readFileSync(join(dir, EVENTS_FILE))).toEqual(before);
    s.appendMessages([msg.user('c')], { commit: false });
    s.commit();
    s.close();
    expect(texts(dir)).toEqual(['a', 'c']);
  });

  it('R2: a recorded artifact path that leaves the session directory is refused', () => {
    const dir = fresh();
    const s = openSessionStore(dir);
    const before = [msg.user('a'), msg.assistant('b')];
    s.appendMessages(before);
    const b = s.recordCompaction({
      before,
      after: [msg.user('sum')],
      mode: 'local',
      reason: 'auto',
      strategy: 'local',
    });
    s.close();
    writeFileSync(
      join(dir, '..', 'outside.json'),
      JSON.stringify({ version: 1, boundaryId: b.id, createdAt: 'x', messages: before }),
    );
    const file = join(dir, EVENTS_FILE);
    const original = readFileSync(file, 'utf8');
    for (const evil of ['../outside.json', join(dir, '..', 'outside.json'), 'artifacts/../../outside.json']) {
      const lines = original.split('\n').map((l) => {
        if (!l.includes('"thread.compact_boundary"')) return l;
        const { crc: _crc, ...event } = JSON.parse(l) as Record<string, unknown>;
        return frameLine({ ...event, artifact: evil });
      });
      writeFileSync(file, lines.join('\n'));
      expect(() => openSessionStore(dir, { create: false }).restoreAt(b.id)).toThrow(
        /names artifact .*; artifacts must be artifacts\/<boundary>\.json inside the session directory/,
      );
    }
    writeFileSync(file, original);
    const artifact = join(dir, b.artifact);
    writeFileSync(artifact, ''); // replaced by a link to a file outside
    spawnSync('rm', [artifact]);
    symlinkSync(join(dir, '..', 'outside.json'), artifact);
    expect(() => openSessionStore(dir, { create: false }).restoreAt(b.id)).toThrow(/is a symbolic link/);
  });
});

describe('exclusive session lock (R2)', () => {
  it('R2: a second writer fails at once naming the holder; readers still read', () => {
    const dir = fresh();
    const first = openSessionStore(dir);
    first.appendMessages([msg.user('a')]);
    expect(() => openSessionStore(dir)).toThrow(
      new RegExp(
        `session directory is in use by process ${process.pid} on ${hostname()} \\(since .*\\); .*--wait SECONDS`,
      ),
    );
    expect(texts(dir)).toEqual(['a']);
    first.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    openSessionStore(dir).close();
  });

  it('R2: a lock left by a process that is gone is broken; one held on another host is not', () => {
    const dir = fresh();
    openSessionStore(dir).close();
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: dead, host: hostname(), startedAt: 'x' }));
    const s = openSessionStore(dir);
    s.appendMessages([msg.user('a')]);
    s.close();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: dead, host: 'elsewhere', startedAt: 'y' }));
    expect(() => openSessionStore(dir)).toThrow(/in use by process \d+ on elsewhere \(since y\)/);
  });

  it('R2: a lock naming this process that it never took was left by an earlier process with the same pid, and is broken', () => {
    // A restarted container's first process gets the pid its killed predecessor had.
    const dir = fresh();
    openSessionStore(dir).close();
    writeFileSync(
      join(dir, LOCK_FILE),
      JSON.stringify({ pid: process.pid, host: hostname(), startedAt: 'x' }),
    );
    const s = openSessionStore(dir);
    // The lock this process does hold still keeps a second writer of its own out.
    expect(() => openSessionStore(dir)).toThrow(/this process\)/);
    s.close();
  });
});
