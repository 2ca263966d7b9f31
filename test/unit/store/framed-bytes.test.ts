import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { heldMessage, isHeld } from '#src/messages/held-text.js';
import { msg } from '#src/messages/message.js';
import { frameLine } from '#src/store/frame.js';
import { EVENTS_FILE, openSessionStore } from '#src/store/index.js';

const fresh = () => mkdtempSync(join(tmpdir(), 'compactor-framed-'));

// Wide characters in short texts, and a long one a history holds as UTF-8 bytes.
const wide = 'naïve → 😀 "quoted" \\ back\nslash';
const long = heldMessage(msg.user('x'.repeat(600) + ' → done'));

describe('framed bytes on disk (R2)', () => {
  it('R2: every line of every write path is its event framed, checksum over its UTF-8 bytes', async () => {
    expect(isHeld(long, 'content')).toBe(true);
    const dir = fresh();
    const plain = openSessionStore(dir);
    plain.appendMessages([msg.user(wide)]);
    plain.appendMessages([msg.assistant('held back')], { commit: false });
    plain.commit({ note: 'é' });
    await plain.appendMessagesSyncingLater([long], { n: 1 });
    plain.close();
    const queued = openSessionStore(dir, { queued: true });
    queued.appendMessages([msg.user(`${wide} again`)], { commit: false });
    queued.appendMessages([long, msg.assistant('ok')], { carry: { note: '→' } });
    await queued.appendMessagesSyncingLater([msg.user('last')]);
    await queued.flush!();
    queued.close();
    const lines = readFileSync(join(dir, EVENTS_FILE), 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(12);
    for (const line of lines) {
      const { crc, ...value } = JSON.parse(line) as { crc: string };
      expect(typeof crc).toBe('string');
      expect(line).toBe(frameLine(value));
    }
    const history = openSessionStore(dir, { create: false }).loadHistory();
    expect(history.map((m) => m.content)).toEqual([
      wide,
      'held back',
      long.content,
      `${wide} again`,
      long.content,
      'ok',
      'last',
    ]);
  });
});
