import { describe, expect, it } from '@jest/globals';
import { fsync, mkdtempSync, statSync, write } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { msg } from '#src/messages/message.js';
import { EventLog } from '#src/store/events-log.js';
import type { ThreadEvent } from '#src/store/events.js';
import { loadEventLog } from '#src/store/load-event-log.js';
import { openSessionStore } from '#src/store/index.js';
import type { QueueIo } from '#src/store/write-queue.js';

const fresh = () => mkdtempSync(join(tmpdir(), 'compactor-queued-'));
const event = (seq: number): ThreadEvent => ({
  type: 'message.appended',
  seq,
  at: '2026-12-05T00:00:00.000Z',
  message: msg.user(`message ${seq} ${'x'.repeat(200)}`),
});

const writeAsync = promisify(write);
const fsyncAsync = promisify(fsync);

/** The real file operations, counting fsyncs; armed, the next write stops halfway like a full disk, or the next fsync fails. */
function countingIo(mode: 'partial-write' | 'fsync' = 'fsync') {
  const io = {
    fsyncs: 0,
    armed: false,
    async write(fd: number, buf: Buffer, off: number, len: number, pos: number): Promise<number> {
      if (io.armed && mode === 'partial-write') {
        io.armed = false;
        await writeAsync(fd, buf, off, Math.floor(len / 2), pos);
        throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      }
      return (await writeAsync(fd, buf, off, len, pos)).bytesWritten;
    },
    async fsync(fd: number): Promise<void> {
      if (io.armed && mode === 'fsync') {
        io.armed = false;
        throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
      }
      io.fsyncs++;
      await fsyncAsync(fd);
    },
  } satisfies QueueIo & Record<string, unknown>;
  return io;
}

describe('queued event log writes (R2)', () => {
  it('R2: appends queued while a write is on its way go out together with one fsync, in order', async () => {
    const file = join(fresh(), 'events.jsonl');
    const io = countingIo();
    const log = new EventLog(file);
    log.queueWrites(io);
    for (let seq = 1; seq <= 6; seq++) log.append([event(seq)]);
    await log.flush();
    // The first append starts at once; the five queued behind it share the next fsync.
    expect(io.fsyncs).toBe(2);
    log.close();
    const loaded = loadEventLog(file);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it.each(['partial-write', 'fsync'] as const)(
    'R2: a failed queued write (%s) rejects flush, cuts the log back to its last commit and refuses later writes',
    async (mode) => {
      const file = join(fresh(), 'events.jsonl');
      const io = countingIo(mode);
      const log = new EventLog(file);
      log.queueWrites(io);
      log.append([event(1)]);
      await log.flush();
      const size = statSync(file).size;
      io.armed = true;
      log.append([event(2)], false);
      log.append([event(3)]);
      await expect(log.flush()).rejects.toThrow(mode === 'fsync' ? /EIO/ : /ENOSPC/);
      expect(statSync(file).size).toBe(size);
      expect(() => log.append([event(2)])).toThrow(/events\.jsonl: cannot write/);
      let closed = false;
      log.close(() => (closed = true));
      expect(closed).toBe(true);
      const loaded = loadEventLog(file);
      expect(loaded.warnings).toEqual([]);
      expect(loaded.events.map((e) => e.seq)).toEqual([1]);
    },
  );

  it('R1: a queued store reads its unwritten artifacts and snapshots, keeps its lock until they land, and reloads whole', async () => {
    const dir = fresh();
    const s = openSessionStore(dir, { queued: true });
    const before = [msg.user('a'), msg.assistant('b'), msg.user('c'), msg.assistant('d')];
    s.appendMessages(before);
    const after = [msg.user('Previous conversation summary:\n- x'), msg.assistant('d')];
    const b = s.recordCompaction({ before, after, mode: 'local', reason: 'auto', strategy: 'local' });
    s.saveSnapshot('machine', { step: 1 });
    // Read before the writes have landed: from what the store queued.
    expect(s.restoreAt(b.id)).toEqual(before);
    expect(s.loadSnapshot('machine')).toEqual({ step: 1 });
    s.appendMessages([msg.user('e')], { commit: false });
    expect(s.rollback()).toBe(1);
    s.appendMessages([msg.user('f')]);
    s.close();
    // The writer's lease is held until the queued writes have landed.
    expect(() => openSessionStore(dir)).toThrow(/session directory is in use/);
    await s.flush!();
    const again = openSessionStore(dir);
    expect(again.warnings()).toEqual([]);
    expect(again.loadHistory()).toEqual([...after, msg.user('f')]);
    expect(again.restoreAt(b.id)).toEqual(before);
    expect(again.loadSnapshot('machine')).toEqual({ step: 1 });
    again.close();
  });
  it('R2: lines without a commit line wait in memory and go out with it in one write; written() resolves before its fsync, flush() after it', async () => {
    const file = join(fresh(), 'events.jsonl');
    const io = countingIo();
    let writes = 0;
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const slow = {
      write: (fd: number, buf: Buffer, off: number, len: number, pos: number) => {
        writes++;
        return io.write(fd, buf, off, len, pos);
      },
      fsync: async (fd: number) => held.then(() => io.fsync(fd)),
    };
    const log = new EventLog(file);
    log.queueWrites(slow);
    log.append([event(1), event(2)], false);
    await log.written();
    expect(writes).toBe(0);
    expect(statSync(file).size).toBe(0);
    log.commit();
    await log.written();
    // The lines and their commit line in one write, on the file (a killed process keeps them)
    // while its fsync still waits.
    expect(writes).toBe(1);
    expect(loadEventLog(file).events.map((e) => e.seq)).toEqual([1, 2]);
    expect(io.fsyncs).toBe(0);
    let flushed = false;
    const flush = log.flush().then(() => (flushed = true));
    await Promise.resolve();
    expect(flushed).toBe(false);
    letGo();
    await flush;
    expect(io.fsyncs).toBe(1);
    log.close();
  });

  it('R2: lines dropped before their commit line leave the file as it was, with no write, cut or fsync', async () => {
    const file = join(fresh(), 'events.jsonl');
    const io = countingIo();
    const log = new EventLog(file);
    log.queueWrites(io);
    log.append([event(1)]);
    await log.flush();
    const size = statSync(file).size;
    log.append([event(2)], false);
    expect(log.rollback()).toBe(1);
    await log.flush();
    expect(io.fsyncs).toBe(1);
    expect(statSync(file).size).toBe(size);
    log.append([event(2)]);
    await log.flush();
    log.close();
    expect(loadEventLog(file).events.map((e) => e.seq)).toEqual([1, 2]);
  });
});
