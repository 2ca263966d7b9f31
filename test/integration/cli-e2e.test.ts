import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { exportSession, readSessionFile } from '#src/formats/index.js';
import { startFakeOpenAI } from '#support/fake-openai.js';
import type { FakeServer } from '#support/fake-http.js';
import { agentSession, filesUnder, templateSummary, workDir } from '#support/cli-sessions.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

const repo = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(repo, 'dist', 'src', 'bin', 'compactor.js');
const exec = promisify(execFile);

/** Spawns the real CLI (async, so fake servers in this process keep answering). */
async function spawnCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, ...args], {
      cwd,
      env: { PATH: process.env.PATH, ...env },
    });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

describe('compactor CLI end to end (child process)', () => {
  it('README quick start: `compactor run` on the bundled example compacts offline', async () => {
    const r = await spawnCli(['run', 'examples/sessions/django__django-16560.traj.json'], repo);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^route: offline \/ compactor-offline-v1/m);
    expect(r.out).toMatch(/^decision: compacted — pressure [\d,]+ ≥ threshold 24,000/m);
    expect(r.out).toMatch(
      /^tokens: [\d,]+ before clearing → [\d,]+ after clearing → [\d,]+ after compaction$/m,
    );
    expect(r.out).toMatch(/^strategy: local; summary calls: 1$/m);
  });

  describe('OpenAI-compatible server on 127.0.0.1 (Local over Chat Completions)', () => {
    const KEY = 'sk-FAKE-e2e-key-0123456789abcdefghij';
    let srv: FakeServer;
    const dir = workDir('e2e');
    beforeAll(async () => {
      srv = await startFakeOpenAI({ window: 8_000, summaryText: templateSummary() }); // the run's --capacity
    });
    afterAll(async () => {
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('S1, S2: compacts via Local; request path, auth and disabled tool use; no key in any output or file', async () => {
      // A Chat Completions request file for the same model: its tool catalog is reused (same provider and model).
      const chatFile = join(dir, 'request.json');
      const messages = agentSession();
      const tools = [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }];
      const chat = (JSON.parse(exportSession(messages, 'openai-chat')) as { messages: unknown[] }).messages;
      writeFileSync(chatFile, JSON.stringify({ model: 'local-model', tools, messages: chat }));

      const r = await spawnCli(
        [
          ...['run', 'request.json', '--provider', 'openai-compatible', '--base-url', srv.url],
          ...['--api-key-env', 'FAKE_KEY', '--model', 'local-model', '--capacity', '8000'],
          ...['--session-dir', 'store', '--out', 'next.json', '--inspect=jsonl', '--json'],
        ],
        dir,
        { FAKE_KEY: KEY },
      );
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      const j = JSON.parse(r.out) as Record<string, any>;
      expect(j).toMatchObject({
        decision: 'compacted',
        strategy: 'local',
        summaryCalls: 1,
        outFormat: 'openai-chat',
        route: { kind: 'openai-compatible', strategy: 'local', apiKeyEnv: 'FAKE_KEY' },
      });

      expect(srv.requests).toHaveLength(1);
      const req = srv.requests[0];
      expect(req.path).toBe('/v1/chat/completions');
      expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(req.body.model).toBe('local-model');
      expect(req.body.tools).toEqual(
        tools.map((t) =>
          expect.objectContaining({ function: expect.objectContaining({ name: t.function.name }) }),
        ),
      );
      expect(req.body.tool_choice).toBe('none');
      expect(req.body.messages[0]).toMatchObject({ role: 'system' }); // frozen parent prefix

      const next = readSessionFile(join(dir, 'next.json'));
      expect(next.format).toBe('openai-chat');
      expect(next.sessions[0].messages).toHaveLength(j.items.after);
      for (const text of [
        r.out,
        r.err,
        readFileSync(join(dir, 'next.json'), 'utf8'),
        ...filesUnder(join(dir, 'store')).map((f) => f.text),
      ])
        expect(text).not.toContain(KEY);
    });
  });
});
