import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgentCli } from '#dev/clients/agent-cli.js';
import {
  ensureGeminiCli,
  GEMINI_CLI_PACKAGE,
  geminiCliAnswer,
  geminiCliEnv,
} from '#dev/clients/gemini-cli.js';
import { LOOP_ANSWER, LOOP_GOAL, LOOP_TASK, loopScript, writeLoopFiles } from '#dev/clients/tool-loop.js';
import { startGeminiUpstream, type GeminiUpstream } from '#dev/fakes/gemini-upstream.js';
import { estimateBodyTokens, requestedOutputTokens } from '#dev/fakes/fake-window.js';
import { startServer, type RunningServer } from '#src/serve/index.js';

/*
 * Gemini CLI from npm, run headless with GOOGLE_GEMINI_BASE_URL pointing at `compactor serve`,
 * with its default system prompt and tools, in front of a fake Gemini model on 127.0.0.1 that
 * has it read 12 files of ~4k tokens at a 16k window. Opt-in (COMPACTOR_AGENT_CLI=1): the CLI
 * is installed from npm on first use into a cache outside the repository.
 */

const WINDOW = 16_000;
const STEPS = 12;
const RESULT_TOKENS = 4_000;
const KEY = 'fake-gemini-key-3c9e';
const optedIn = process.env.COMPACTOR_AGENT_CLI === '1';
const suite = optedIn ? describe : describe.skip;

suite(
  `Gemini CLI (${GEMINI_CLI_PACKAGE}) through compactor serve${optedIn ? '' : ' (skipped: set COMPACTOR_AGENT_CLI=1 to run it)'}`,
  () => {
    let dir: string;
    let upstream: GeminiUpstream;
    let proxy: RunningServer;
    let run: Awaited<ReturnType<typeof runAgentCli>>;

    beforeAll(async () => {
      const gemini = await ensureGeminiCli();
      dir = mkdtempSync(join(tmpdir(), 'compactor-gemini-cli-'));
      const files = join(dir, 'repo');
      writeLoopFiles(files, STEPS, RESULT_TOKENS);
      const fileOf = (n: number) => join(files, `file-${n}.txt`);
      upstream = await startGeminiUpstream({
        window: WINDOW,
        script: loopScript(STEPS, { name: 'read_file', args: (n) => ({ file_path: fileOf(n) }) }),
        stepOf: (args: any) => {
          const m = /file-(\d+)\.txt$/.exec(String(args?.file_path ?? ''));
          return m ? Number(m[1]) : undefined;
        },
      });
      proxy = await startServer({ port: 0, capacity: WINDOW, geminiUpstream: upstream.baseUrl });
      const env = geminiCliEnv(proxy.url, join(dir, 'home'), KEY);
      run = await runAgentCli(
        process.execPath,
        [gemini, '-p', LOOP_TASK, '--yolo', '-o', 'stream-json', '-m', 'gemini-2.5-flash'],
        { cwd: files, env },
      );
    }, 600_000);

    afterAll(async () => {
      await proxy?.close();
      await upstream?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    test('H1: exits 0 with the final answer after reading every file', () => {
      expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr.slice(-2000) }).toEqual({
        code: 0,
        stderr: '',
      });
      expect(geminiCliAnswer(run.stdout)).toContain(LOOP_ANSWER);
      expect(upstream.turns.filter((t) => typeof t.answered === 'number')).toHaveLength(STEPS);
    });

    test('C1/N1: every request fits the window (tiktoken), pairs its calls and keeps the task; the key goes to the Gemini upstream as sent', () => {
      const sizes = upstream.requests.map((r) => estimateBodyTokens(r.body) + requestedOutputTokens(r.body));
      const summaries = upstream.turns.filter((t) => t.answered === 'summary').length;
      console.log(
        `Gemini CLI at ${WINDOW}: ${upstream.requests.length} requests, largest ${Math.max(...sizes)} tokens, ${summaries} summaries`,
      );
      expect(Math.max(...sizes)).toBeLessThanOrEqual(WINDOW);
      for (const r of upstream.requests) {
        expect(r.path).toMatch(
          /^\/v1beta\/models\/gemini-2\.5-flash:(streamGenerateContent\?alt=sse|generateContent)$/,
        );
        expect(r.headers['x-goog-api-key']).toBe(KEY);
      }
      for (const t of upstream.turns.filter((x) => x.answered !== 'summary')) {
        const contents: any[] = t.request.body.contents;
        expect(JSON.stringify(contents)).toContain(LOOP_GOAL);
        contents.forEach((c, i) => {
          const results = (c.parts ?? []).filter((p: any) => p.functionResponse).length;
          if (results === 0) return;
          const calls = (contents[i - 1]?.parts ?? []).filter((p: any) => p.functionCall).length;
          expect({ at: i, results }).toEqual({ at: i, results: calls });
        });
      }
    });
  },
);
