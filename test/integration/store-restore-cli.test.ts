import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '#src/cli/main.js';
import { msg } from '#src/messages/message.js';
import { openSessionStore } from '#src/store/index.js';

function sink(): { stream: Writable; text: () => string } {
  let out = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out += chunk.toString();
      cb();
    },
  });
  return { stream, text: () => out };
}

async function cli(args: string[], cwd: string) {
  const stdout = sink();
  const stderr = sink();
  const code = await main(args, { stdout: stdout.stream, stderr: stderr.stream, cwd, env: {} });
  return { code, out: stdout.text(), err: stderr.text() };
}

function sessionDir(): { dir: string; before: ReturnType<typeof msg.user>[] } {
  const dir = mkdtempSync(join(tmpdir(), 'compactor-restore-'));
  const s = openSessionStore(dir);
  const before = [msg.user('fix the bug'), msg.assistant('looking'), msg.user('thanks')];
  s.appendMessages(before);
  s.recordCompaction({
    before,
    after: [msg.user('Previous conversation summary:\n- x')],
    mode: 'local',
    reason: 'manual',
    strategy: 'local',
  });
  s.close();
  return { dir, before };
}

describe('compactor restore (R1)', () => {
  it('R1: lists boundaries, then recovers the pre-compaction history to a file in canonical or provider format', async () => {
    const { dir, before } = sessionDir();
    const list = await cli(['restore', dir, '--json'], dir);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.out).boundaries[0]).toMatchObject({
      id: 'compact-000004',
      before: 3,
      after: 1,
      reason: 'manual',
    });

    const out = join(dir, 'restored.json');
    const r = await cli(['restore', dir, '--at', 'compact-000004', '--out', out, '--json'], dir);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ boundary: 'compact-000004', messages: 3, to: 'canonical' });
    expect(readFileSync(out, 'utf8')).toContain('fix the bug');

    const chat = await cli(['restore', dir, '--at', 'compact-000004', '--to', 'openai-chat'], dir);
    expect(chat.code).toBe(0);
    expect(chat.out).toContain('"role": "user"');
    expect(before).toHaveLength(3);
  });

  it('R1: an unknown boundary or missing directory is a one-line user error (exit 2)', async () => {
    const { dir } = sessionDir();
    const bad = await cli(['restore', dir, '--at', 'compact-000099'], dir);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/no compaction boundary 'compact-000099'/);
    expect(bad.err.trim().split('\n')).toHaveLength(1);
    // The CLI names its own way to list the boundaries, not a library method.
    expect(bad.err).toContain(`\`compactor restore ${dir}\` lists them`);
    expect(bad.err).not.toMatch(/listBoundaries/);
    const noDir = await cli(['restore', dir, '--at', 'compact-000004', '--out', 'missing-dir/x.json'], dir);
    expect(noDir).toEqual({
      code: 2,
      out: '',
      err: `compactor: restore: --out: no such directory ${join(dir, 'missing-dir')}\n`,
    });
    const missing = await cli(['restore', join(dir, 'nope'), '--at', 'x'], dir);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/no such session directory/);
  });
});
