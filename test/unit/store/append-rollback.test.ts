import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventLog, type AppendIo } from '#src/store/events-log.js';
import { loadEventLog } from '#src/store/load-event-log.js';
import type { ThreadEvent } from '#src/store/events.js';
import { msg } from '#src/messages/message.js';

const event = (seq: number): ThreadEvent => ({
  type: 'message.appended',
  seq,
  at: '2026-12-02T00:00:00.000Z',
  message: msg.user(`message ${seq} ${'x'.repeat(200)}`),
});

/** Writes only part of the buffer, then fails like a full disk; or fails at fsync. */
function faultyIo(mode: 'partial-write' | 'fsync'): AppendIo & { armed: boolean } {
  const io = {
    armed: false,
    writeSync(fd: number, buf: Buffer, off: number, len: number): number {
      if (io.armed && mode === 'partial-write') {
        io.armed = false;
        writeSync(fd, buf, off, Math.floor(len / 2));
        throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      }
      return writeSync(fd, buf, off, len);
    },
    fsyncSync(_fd: number): void {
      if (io.armed && mode === 'fsync') {
        io.armed = false;
        throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
      }
    },
    fsync(fd: number): Promise<void> {
      try {
        io.fsyncSync(fd);
        return Promise.resolve();
      } catch (e) {
        return Promise.reject(e as Error);
      }
    },
  };
  return io;
}

describe('event log append rollback (R2)', () => {
  it.each(['partial-write', 'fsync'] as const)(
    'R2: a failed append (%s) leaves the log as it was, and the next append loads cleanly',
    (mode) => {
      const file = join(mkdtempSync(join(tmpdir(), 'compactor-log-')), 'events.jsonl');
      const io = faultyIo(mode);
      const log = new EventLog(file, io);
      log.append([event(1)]);
      const size = statSync(file).size;
      io.armed = true;
      expect(() => log.append([event(2)])).toThrow(mode === 'fsync' ? /EIO/ : /ENOSPC/);
      expect(statSync(file).size).toBe(size);
      log.append([event(2)]); // the caller retries with the same sequence number
      log.close();
      const loaded = loadEventLog(file);
      expect(loaded.warnings).toEqual([]);
      expect(loaded.events.map((e) => e.seq)).toEqual([1, 2]);
    },
  );

  it('R2: an append whose fsync runs off the event loop is durable once it resolves; a failed one leaves the log as it was and refuses further writes', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'compactor-log-')), 'events.jsonl');
    const io = faultyIo('fsync');
    const log = new EventLog(file, io);
    await log.appendSyncingLater([event(1), event(2)]);
    const size = statSync(file).size;
    io.armed = true;
    await expect(log.appendSyncingLater([event(3)])).rejects.toThrow(/cannot write: .*EIO/);
    expect(statSync(file).size).toBe(size);
    expect(() => log.append([event(3)])).toThrow(/EIO/);
    log.close();
    const loaded = loadEventLog(file);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.events.map((e) => e.seq)).toEqual([1, 2]);
  });
});
