import { afterAll, afterEach, describe, expect, it, jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freeEncoders } from '#src/estimate/index.js';
import { msg } from '#src/messages/message.js';
import { frameLine } from '#src/store/frame.js';
import { EVENTS_FILE } from '#src/store/artifacts.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';
import { cleanUp, fakeUpstream, post, startServe, storedMessages, tempDir } from './harness.js';

/**
 * A process killed while a conversation's first request was in flight (and the next one killed
 * while it took or broke that request's lock) leaves its files in the conversation's directory
 * with no committed session. The retry to a new process must be served from there; a file
 * that is not the store's is still refused, and the error names it.
 */

jest.setTimeout(PROCESS_TEST_MS);
afterAll(() => freeEncoders());
afterEach(cleanUp);

const TASK = 'TASK: rename the billing module.';
const chat = (id: string, url: string) =>
  post(
    url,
    '/v1/chat/completions',
    {
      model: 'gpt-4o',
      max_tokens: 256,
      messages: [
        { role: 'system', content: 'You review code.' },
        { role: 'user', content: TASK },
      ],
    },
    { headers: { 'x-compactor-session': id } },
  );

/** Writes what the killed processes left in the directory of conversation `id`. */
function leaveKilledFirstRequest(dataDir: string, id: string): string {
  const dir = join(dataDir, id);
  mkdirSync(join(dir, 'artifacts'), { recursive: true });
  mkdirSync(join(dir, 'snapshots'), { recursive: true });
  const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
  // The breaker of a process killed after it removed the stale lock, before it removed itself.
  writeFileSync(join(dir, 'lock.break'), '');
  // A lock of a process killed before it linked it into place.
  writeFileSync(
    join(dir, `lock.${dead}.tmp`),
    JSON.stringify({ pid: dead, host: 'here', startedAt: new Date().toISOString() }),
  );
  // The first request's messages, written but never committed.
  const at = new Date().toISOString();
  writeFileSync(
    join(dir, EVENTS_FILE),
    `${frameLine({ type: 'message.appended', seq: 1, at, message: msg.system('You review code.') })}\n`,
  );
  // A snapshot write cut off between its temp file and the rename.
  writeFileSync(join(dir, 'snapshots', `.turn.json.${dead}.${Date.now()}.k2x9.tmp`), '{"tur');
  return dir;
}

describe('R2: compactor serve: a retry after a kill during the first request', () => {
  it('R2: the retry is served from the directory the killed processes left, and stored once', async () => {
    const upstream = await fakeUpstream();
    const cwd = tempDir();
    const dataDir = join(cwd, 'sessions');
    leaveKilledFirstRequest(dataDir, 'left');
    const serve = await startServe(upstream.url, cwd);
    const res = await chat('left', serve.url);
    expect([res.status, await res.text()]).toEqual([200, expect.any(String)]);
    const stored = storedMessages(dataDir).get('left')!;
    expect(stored.filter((m) => JSON.stringify(m).includes(TASK))).toHaveLength(1);
  });

  it('R2: a file that is not the store’s is still refused, and the error names it', async () => {
    const upstream = await fakeUpstream();
    const cwd = tempDir();
    const dataDir = join(cwd, 'sessions');
    const dir = leaveKilledFirstRequest(dataDir, 'mine');
    writeFileSync(join(dir, '.notes.tmp'), 'my notes');
    const serve = await startServe(upstream.url, cwd);
    const res = await chat('mine', serve.url);
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/holds other files \(\.notes\.tmp\) and no session/);
    expect(upstream.requests).toHaveLength(0);
  });
});
