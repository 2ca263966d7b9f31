import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLAUDE_CODE_PACKAGE,
  claudeCodeArgs,
  claudeCodeEnv,
  ensureClaudeCode,
  runAgentCli,
} from '#dev/clients/agent-cli.js';
import {
  auditTurns,
  LOOP_ANSWER,
  LOOP_SYSTEM,
  LOOP_TASK,
  loopScript,
  writeLoopFiles,
} from '#dev/clients/tool-loop.js';
import { startAgentUpstream, type AgentUpstream } from '#dev/fakes/agent-upstream.js';
import { estimateBodyTokens } from '#dev/fakes/fake-window.js';
import { freeAuditEncoder } from '#dev/loops/prompt-audit.js';
import { startServer, type RunningServer } from '#src/serve/index.js';

/*
 * Claude Code from npm, run headless (`claude -p … --output-format json`) with
 * ANTHROPIC_BASE_URL pointing at `compactor serve`, in front of a fake model on 127.0.0.1 that
 * has it Read 32 files of ~4k tokens at a 16k window. Opt-in (COMPACTOR_AGENT_CLI=1): the CLI is
 * installed from npm on first use, a few hundred megabytes, into a cache outside the repository.
 */

const WINDOW = 16_000;
const STEPS = 32;
const RESULT_TOKENS = 4_000;
const optedIn = process.env.COMPACTOR_AGENT_CLI === '1';
const suite = optedIn ? describe : describe.skip;

suite(
  `Claude Code (${CLAUDE_CODE_PACKAGE}) through compactor serve${optedIn ? '' : ' (skipped: set COMPACTOR_AGENT_CLI=1 to run it)'}`,
  () => {
    let dir: string;
    let upstream: AgentUpstream;
    let proxy: RunningServer;
    let run: Awaited<ReturnType<typeof runAgentCli>>;

    beforeAll(async () => {
      const claude = await ensureClaudeCode();
      dir = mkdtempSync(join(tmpdir(), 'compactor-claude-code-'));
      const files = join(dir, 'repo');
      writeLoopFiles(files, STEPS, RESULT_TOKENS);
      upstream = await startAgentUpstream({
        window: WINDOW,
        script: loopScript(STEPS, {
          name: 'Read',
          args: (n) => ({ file_path: join(files, `file-${n}.txt`) }),
        }),
      });
      proxy = await startServer({ port: 0, capacity: WINDOW, anthropicUpstream: upstream.anthropicUrl });
      // Its output limit is set below the window: it asks for 32k by default, more than fits in 16k.
      const env = claudeCodeEnv(proxy.url, join(dir, 'home'), {
        CLAUDE_CODE_MAX_OUTPUT_TOKENS: '4000',
        MAX_THINKING_TOKENS: '0',
      });
      run = await runAgentCli(claude, claudeCodeArgs(LOOP_TASK, LOOP_SYSTEM, 'claude-sonnet-4-5'), {
        cwd: files,
        env,
      });
    });

    afterAll(async () => {
      await proxy?.close();
      await upstream?.close(); // rejects when any request went over the window
      if (dir) rmSync(dir, { recursive: true, force: true });
      freeAuditEncoder();
    });

    test('it finishes the 32-step loop with the final answer', () => {
      expect(run.stderr.trim()).toBe('');
      expect(run.code).toBe(0);
      expect(run.result).toMatchObject({ is_error: false, result: LOOP_ANSWER, num_turns: STEPS + 1 });
    });

    test('H1/N1: every request the model received fits the window, keeps pairing and the task, in step order', () => {
      const audit = auditTurns(upstream.turns, WINDOW);
      expect(audit.steps).toEqual([...Array.from({ length: STEPS }, (_, n) => n), 'final']);
      expect(audit.overWindow).toBe(0);
      expect(audit.badPairing).toBe(0);
      expect(audit.taskMissing).toBe(0);
      expect(upstream.violations).toEqual([]);
    });

    test('the input tokens it reports are those of what was really sent, far less than it resent', () => {
      const sent = upstream.turns
        .filter((t) => t.answered !== 'summary')
        .map((t) => estimateBodyTokens(t.request.body));
      // The fake model caches prompts as Anthropic does, so what was sent is split three ways.
      const usage = run.result?.usage as {
        input_tokens: number;
        cache_creation_input_tokens?: number;
        cache_read_input_tokens?: number;
      };
      const reported =
        usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
      expect(reported).toBe(sent.reduce((a, b) => a + b, 0));
      expect(Math.max(...sent)).toBeLessThan(WINDOW);
    });
  },
);
