import { afterAll, afterEach, describe, expect, it, jest } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  createReadStream,
  lstatSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  chmodSync,
  symlinkSync,
} from 'node:fs';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { agentSession, canonicalFile, workDir } from '#support/cli-sessions.js';
import { runCompiledCli, stopRunningClis } from '#support/compiled-cli.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

// `--out` as a user meets it: the built CLI as a process, writing into files that are not
// plain files. A device or pipe is written into, a link is written through, never replaced.
const dir = workDir('special-out');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => stopRunningClis());
canonicalFile(dir, 'in.json', agentSession(6, 300));
const cli = (args: string[]) => runCompiledCli(args, { cwd: dir });
/** The import as a plain file, made once: the special outputs must receive the same text. */
let plain: Promise<string> | undefined;
const exported = (): Promise<string> =>
  (plain ??= cli(['import', 'in.json', '--out', 'plain.json']).then(() =>
    readFileSync(join(dir, 'plain.json'), 'utf8'),
  ));
const oneLine = (err: string) => expect(err).toMatch(/^compactor: [^\n]+\n$/);

describe('--out onto special files (D3, R2)', () => {
  it.each([
    [['import', 'in.json']],
    [['compact', 'in.json', '--capacity', '4000']],
    [['run', 'in.json', '--capacity', '4000']],
  ])('D3: --out /dev/stdout writes the session to standard output: %j', async (args) => {
    const r = await cli([...args, '--out', '/dev/stdout', '--to', 'canonical']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('"format": "compactor.canonical"');
    expect(lstatSync('/dev/stdout').isSymbolicLink()).toBe(true);
  });

  it('D3: a FIFO is written into as a stream and stays a FIFO', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    // The reader opens first and collects until the writer closes its end.
    const read = new Promise<string>((resolve, reject) => {
      let text = '';
      createReadStream(fifo, 'utf8')
        .on('data', (d) => (text += String(d)))
        .on('end', () => resolve(text))
        .on('error', reject);
    });
    const r = await cli(['import', 'in.json', '--out', 'fifo']);
    expect(r.code).toBe(0);
    expect(await read).toBe(await exported());
    expect(statSync(fifo).isFIFO()).toBe(true);
  });

  it('R2: a symbolic link is written through: its target is replaced (permissions kept), the link stays', async () => {
    writeFileSync(join(dir, 'target.json'), 'old');
    chmodSync(join(dir, 'target.json'), 0o640);
    symlinkSync('target.json', join(dir, 'link.json'));
    symlinkSync('made-by-link.json', join(dir, 'dangling.json'));
    expect((await cli(['import', 'in.json', '--out', 'link.json'])).code).toBe(0);
    expect((await cli(['import', 'in.json', '--out', 'dangling.json'])).code).toBe(0);
    const expected = await exported();
    expect(readlinkSync(join(dir, 'link.json'))).toBe('target.json');
    expect(readFileSync(join(dir, 'target.json'), 'utf8')).toBe(expected);
    expect(statSync(join(dir, 'target.json')).mode & 0o777).toBe(0o640);
    expect(readlinkSync(join(dir, 'dangling.json'))).toBe('made-by-link.json');
    expect(readFileSync(join(dir, 'made-by-link.json'), 'utf8')).toBe(expected);
  });

  it('D3: a full device gives one line and a non-zero exit, and stays a device', async () => {
    for (const args of [
      ['import', 'in.json', '--out', '/dev/full'],
      ['compact', 'in.json', '--capacity', '4000', '--out', '/dev/full'],
    ]) {
      const r = await cli(args);
      expect(r.code).not.toBe(0);
      oneLine(r.err);
      expect(r.err).toContain('no space left on device');
      expect(statSync('/dev/full').isCharacterDevice()).toBe(true);
    }
  });

  it('D3: a directory or a socket is refused with one line and exit 2 before any work', async () => {
    const sock = join(dir, 'sock');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    try {
      for (const out of ['sock', dir]) {
        for (const args of [
          ['import', 'in.json', '--out', out],
          ['run', 'in.json', '--capacity', '4000', '--out', out],
        ]) {
          const r = await cli(args);
          expect(r.code).toBe(2);
          oneLine(r.err);
          expect(r.err).toMatch(/is a (socket|directory), not a file/);
        }
      }
      expect(statSync(sock).isSocket()).toBe(true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
