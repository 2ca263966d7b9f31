import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCompiledCli } from '#support/compiled-cli.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

/**
 * `compactor project --preset vtcode --out` run as a process on a Gemini history (Chat
 * Completions, each call signed in `extra_content.google.thought_signature`): the written
 * request drops the signature of the call whose result was cleared and keeps the others.
 */

const dir = mkdtempSync(join(tmpdir(), 'compactor-signature-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'compactor.config.json'), JSON.stringify({ encoding: 'chars' }));

const big = (tag: string) => `${tag} `.repeat(4_000);
const signed = (id: string, args: string) => ({
  id,
  type: 'function',
  function: { name: 'write_file', arguments: args },
  extra_content: { google: { thought_signature: `sig-${id}` } },
});
interface ChatDoc {
  messages: Array<{ role: string; content: string | null; tool_calls?: Array<ReturnType<typeof signed>> }>;
}
const doc: ChatDoc & { model: string } = {
  model: 'gemini-3-pro',
  messages: [
    { role: 'user', content: 'Write the files.' },
    { role: 'assistant', content: null, tool_calls: [signed('old', JSON.stringify({ body: big('draft') }))] },
    { role: 'tool', tool_call_id: 'old', content: big('written') } as ChatDoc['messages'][number],
    { role: 'user', content: 'And the next one.' },
    { role: 'assistant', content: null, tool_calls: [signed('recent', '{"path":"b.txt"}')] },
    { role: 'tool', tool_call_id: 'recent', content: 'ok' } as ChatDoc['messages'][number],
  ],
};
const input = join(dir, 'gemini.json');
// Two batches in all: keep only the newest, so the older one is cleared.
const keepOne = ['--keep-tool-uses', '1', '--keep-recent-batches', '1'];
writeFileSync(input, JSON.stringify(doc));

describe('compactor project --preset vtcode --out (child process)', () => {
  it('C7: the cleared call goes out without its thought signature; the protected call keeps its own', async () => {
    const out = join(dir, 'request.json');
    const r = await runCompiledCli(
      ['project', input, '--preset', 'vtcode', '--trigger', '1000', ...keepOne, '--out', out, '--json'],
      { cwd: dir },
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect((JSON.parse(r.out) as { clearedResults: number }).clearedResults).toBe(1);
    const written = JSON.parse(readFileSync(out, 'utf8')) as ChatDoc;
    const [cleared] = written.messages[1].tool_calls!;
    const [kept] = written.messages[4].tool_calls!;
    expect(written.messages[2].content).toContain('"cleared":"tool_result"');
    expect(cleared.id).toBe('old');
    expect(cleared).not.toHaveProperty('extra_content');
    expect(readFileSync(out, 'utf8')).not.toContain('sig-old');
    expect(kept.extra_content).toEqual({ google: { thought_signature: 'sig-recent' } });
  });
});
