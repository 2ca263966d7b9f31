import { afterAll, describe, expect, it } from '@jest/globals';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  fsyncOffThread,
  fsyncThreadReady,
  settleFinishedFsyncs,
  stopFsyncThreadForTest,
} from '#src/store/fsync-thread.js';

const dir = mkdtempSync(join(tmpdir(), 'compactor-fsync-thread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Appends a line and fsyncs it (through the thread pool until the thread is up) until the thread takes fsyncs. */
async function untilThreadReady(fd: number): Promise<number> {
  let fsyncs = 0;
  while (!fsyncThreadReady()) {
    writeSync(fd, `line ${fsyncs}\n`);
    await fsyncOffThread(fd);
    fsyncs++;
  }
  return fsyncs;
}

describe('fsyncs on a thread of their own', () => {
  it('R2: the thread fsyncs what was written, and several files at once', async () => {
    const files = ['a', 'b', 'c'].map((n) => join(dir, `${n}.jsonl`));
    const fds = files.map((f) => openSync(f, 'a'));
    try {
      await untilThreadReady(fds[0]!);
      const synced = fds.map((fd, i) => {
        writeSync(fd, `last ${i}\n`);
        return fsyncOffThread(fd);
      });
      await Promise.all(synced);
      files.forEach((f, i) => expect(readFileSync(f, 'utf8').endsWith(`last ${i}\n`)).toBe(true));
      expect(fsyncThreadReady()).toBe(true);
    } finally {
      fds.forEach((fd) => closeSync(fd));
    }
  });

  it('R2: an fsync the thread finished is settled at once when asked, before the event loop goes on', async () => {
    const fd = openSync(join(dir, 'settle.jsonl'), 'a');
    try {
      await untilThreadReady(fd);
      writeSync(fd, 'one line\n');
      let settled = false;
      const synced = fsyncOffThread(fd).then(() => (settled = true));
      // Wait on the main thread (as a turn's own work would) until the thread has done it.
      while (!settled) {
        settleFinishedFsyncs();
        await Promise.resolve(); // the promise's reactions, no pass of the event loop
      }
      await synced;
      expect(settled).toBe(true);
    } finally {
      closeSync(fd);
    }
  });

  it('R2: a failed fsync rejects with the error of the file, and the thread goes on', async () => {
    const fd = openSync(join(dir, 'bad.jsonl'), 'a');
    await untilThreadReady(fd);
    closeSync(fd); // no such descriptor any more
    await expect(fsyncOffThread(fd)).rejects.toMatchObject({ code: 'EBADF', syscall: 'fsync' });
    const good = openSync(join(dir, 'good.jsonl'), 'a');
    try {
      writeSync(good, 'still works\n');
      await expect(fsyncOffThread(good)).resolves.toBeUndefined();
      expect(fsyncThreadReady()).toBe(true);
    } finally {
      closeSync(good);
    }
  });

  it('R2: a thread that stops fails no fsync silently: each one waiting settles, and later ones still run', async () => {
    const fd = openSync(join(dir, 'crash.jsonl'), 'a');
    try {
      await untilThreadReady(fd);
      writeSync(fd, 'before the crash\n');
      const waiting = [fsyncOffThread(fd), fsyncOffThread(fd)];
      await stopFsyncThreadForTest();
      // Each either ran before the thread ended or fails with its end; none is left waiting.
      for (const r of await Promise.allSettled(waiting))
        if (r.status === 'rejected') expect(String(r.reason)).toMatch(/fsync thread stopped/);
      writeSync(fd, 'after the crash\n');
      await expect(fsyncOffThread(fd)).resolves.toBeUndefined();
      await untilThreadReady(fd); // a new thread starts
      writeSync(fd, 'on the new thread\n');
      await expect(fsyncOffThread(fd)).resolves.toBeUndefined();
    } finally {
      closeSync(fd);
    }
  });
});
