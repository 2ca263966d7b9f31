import { describe, expect, it } from '@jest/globals';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { msg } from '#src/messages/message.js';
import { openSessionStore, EVENTS_FILE } from '#src/store/index.js';

const fresh = () => mkdtempSync(join(tmpdir(), 'compactor-store-'));

describe('durable session store (R1–R2)', () => {
  it('R1: appended messages replay as the live history after reopening', () => {
    const dir = fresh();
    const s = openSessionStore(dir);
    s.appendMessages([msg.user('a'), msg.assistant('b')]);
    s.appendMessages([msg.user('c')]);
    s.close();
    const again = openSessionStore(dir);
    expect(again.loadHistory()).toEqual([msg.user('a'), msg.assistant('b'), msg.user('c')]);
    expect(again.events().map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(again.warnings()).toEqual([]);
  });

  it('R1: compaction writes the full-history artifact and a thread.compact_boundary; restoreAt recovers it', () => {
    const dir = fresh();
    const s = openSessionStore(dir);
    const before = [msg.user('a'), msg.assistant('b'), msg.user('c'), msg.assistant('d')];
    s.appendMessages(before);
    const after = [msg.user('Previous conversation summary:\n- x'), msg.user('c'), msg.assistant('d')];
    const b = s.recordCompaction({ before, after, mode: 'local', reason: 'auto', strategy: 'local' });
    s.appendMessages([msg.user('e')]);
    expect(b).toMatchObject({
      id: 'compact-000005',
      before: 4,
      after: 3,
      mode: 'local',
      reason: 'auto',
      strategy: 'local',
    });
    expect(existsSync(join(dir, b.artifact))).toBe(true);
    s.close();

    const again = openSessionStore(dir);
    expect(again.loadHistory()).toEqual([...after, msg.user('e')]);
    expect(again.listBoundaries().map((x) => x.id)).toEqual(['compact-000005']);
    expect(again.restoreAt('compact-000005')).toEqual(before);
    const event = readFileSync(join(dir, EVENTS_FILE), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"thread.compact_boundary"'))
      .map((l) => JSON.parse(l) as unknown)[0];
    expect(event).toMatchObject({
      type: 'thread.compact_boundary',
      before: 4,
      after: 3,
      artifact: 'artifacts/compact-000005.json',
    });
    expect(() => again.restoreAt('compact-999999')).toThrow(/no compaction boundary 'compact-999999'/);
    expect(() => again.restoreAt('../x')).toThrow(/invalid boundary name/);
  });

  it('R2: a torn final line is ignored and reported, never fatal, and trimmed before the next append', () => {
    const dir = fresh();
    const s = openSessionStore(dir);
    s.appendMessages([msg.user('a')]);
    s.close();
    appendFileSync(join(dir, EVENTS_FILE), '{"type":"message.appended","seq":2,"at":"x","mess');
    const again = openSessionStore(dir);
    expect(again.loadHistory()).toEqual([msg.user('a')]);
    expect(again.warnings()[0]).toMatchObject({
      message: expect.stringMatching(
        /unfinished write .*moved 49 bytes .*aside to .*events\.jsonl\.corrupt$/,
      ),
    });
    expect(readFileSync(join(dir, `${EVENTS_FILE}.corrupt`), 'utf8')).toMatch(/"seq":2,"at":"x","mess$/);
    again.appendMessages([msg.user('b')]);
    again.close();
    const third = openSessionStore(dir);
    expect(third.loadHistory()).toEqual([msg.user('a'), msg.user('b')]);
    expect(third.warnings()).toEqual([]);
  });

  it('R2: a corrupted middle line is an error naming the file, line and field', () => {
    const dir = fresh();
    const s = openSessionStore(dir);
    s.appendMessages([msg.user('a'), msg.user('b'), msg.user('c')]);
    s.close();
    const file = join(dir, EVENTS_FILE);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[1] = lines[1].replace('"role":"user"', '"role":"robot"');
    writeFileSync(file, lines.join('\n'));
    expect(() => openSessionStore(dir)).toThrow(new RegExp(`${EVENTS_FILE}:2: checksum mismatch`));
    // A line from before records carried checksums is checked field by field.
    lines[1] = lines[1].replace(/,"crc":"[0-9a-f]{8}"}$/, '}');
    writeFileSync(file, lines.join('\n'));
    expect(() => openSessionStore(dir)).toThrow(new RegExp(`${EVENTS_FILE}:2: message\\.role: `));
    lines[1] = '{not json';
    writeFileSync(file, lines.join('\n'));
    expect(() => openSessionStore(dir)).toThrow(/events\.jsonl:2: invalid JSON/);
  });

  it('R2: sequence gaps are detected as damage', () => {
    const dir = fresh();
    const s = openSessionStore(dir);
    s.appendMessages([msg.user('a'), msg.user('b')]);
    s.close();
    const file = join(dir, EVENTS_FILE);
    const lines = readFileSync(file, 'utf8').split('\n');
    writeFileSync(file, `${lines[1]}\n`);
    expect(() => openSessionStore(dir)).toThrow(/:1: seq: expected 1, found 2/);
  });

  it('R2: snapshots are saved atomically and loaded back; an artifact without its boundary is reported', () => {
    const dir = fresh();
    const s = openSessionStore(dir);
    expect(s.loadSnapshot('machine')).toBeUndefined();
    s.saveSnapshot('machine', { value: 'idle', context: { n: 1 } });
    s.saveSnapshot('machine', { value: 'busy', context: { n: 2 } });
    expect(s.loadSnapshot('machine')).toEqual({ value: 'busy', context: { n: 2 } });
    s.close();
    writeFileSync(join(dir, 'artifacts', 'compact-000009.json'), '{}');
    writeFileSync(join(dir, 'snapshots', '.machine.json.1.2.abc.tmp'), '{"tor');
    const again = openSessionStore(dir);
    const messages = again.warnings().map((w) => w.message);
    expect(messages).toContain('artifact has no boundary event (crash before it was recorded); ignored');
    expect(messages).toContain('removed a temp file left by an interrupted write');
    expect(existsSync(join(dir, 'snapshots', '.machine.json.1.2.abc.tmp'))).toBe(false);
    expect(() => again.saveSnapshot('../evil', {})).toThrow(/invalid snapshot name/);
  });

  it('R2: a directory the first open made is still searched for temp files and orphan artifacts when opened again', () => {
    const dir = join(fresh(), 'made-by-open');
    const first = openSessionStore(dir);
    expect(first.warnings()).toEqual([]);
    first.appendMessages([msg.user('hi')]);
    first.close();
    writeFileSync(join(dir, 'artifacts', 'compact-000009.json'), '{}');
    writeFileSync(join(dir, '.events.jsonl.1.2.abc.tmp'), '{"tor');
    const again = openSessionStore(dir);
    const messages = again.warnings().map((w) => w.message);
    expect(messages).toContain('artifact has no boundary event (crash before it was recorded); ignored');
    expect(messages).toContain('removed a temp file left by an interrupted write');
    expect(existsSync(join(dir, '.events.jsonl.1.2.abc.tmp'))).toBe(false);
    expect(again.loadHistory()).toHaveLength(1);
  });

  it('R1: a read-only open of a missing directory fails with one line', () => {
    expect(() => openSessionStore(join(fresh(), 'nope'), { create: false })).toThrow(
      /no such session directory/,
    );
  });
});
