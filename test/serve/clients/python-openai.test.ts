import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureOpenAIPython, hasPython3 } from '#dev/clients/python-venv.js';
import {
  auditTurns,
  LOOP_ANSWER,
  LOOP_SYSTEM,
  LOOP_TASK,
  loopScript,
  writeLoopFiles,
} from '#dev/clients/tool-loop.js';
import { startAgentUpstream, type AgentTurn, type AgentUpstream } from '#dev/fakes/agent-upstream.js';
import { estimateBodyTokens } from '#dev/fakes/fake-window.js';
import { freeAuditEncoder } from '#dev/loops/prompt-audit.js';
import { startServer, type RunningServer } from '#src/serve/index.js';
import { PROCESS_TEST_MS } from '#support/time-limits.js';

jest.setTimeout(PROCESS_TEST_MS);

/*
 * The official Python `openai` package, driven by an agent loop written as its users write one
 * (test/serve/clients/openai_loop.py), against `compactor serve` in front of a fake model on
 * 127.0.0.1: 32 steps of ~4k-token tool results at a 16k window, Chat Completions and
 * Responses, streaming and not — the four loops at once, each its own session.
 */

const WINDOW = 16_000;
const STEPS = 32;
const RESULT_TOKENS = 4_000;
const LOOPS = [
  { api: 'chat', stream: false },
  { api: 'chat', stream: true },
  { api: 'responses', stream: false },
  { api: 'responses', stream: true },
] as const;

interface PyTurn {
  /** The response id: the fake ends it in `t<n>`, n the index of the upstream request it answered. */
  id: string;
  text: string;
  calls: { id: string; name: string; arguments: string }[];
  usage: number | null;
  intact?: boolean;
  final?: string;
}

const python3 = hasPython3();
const suite = python3 ? describe : describe.skip;
if (!python3) console.warn('python-openai.test: skipped because python3 is not installed on this machine');

suite(`the Python openai package through compactor serve${python3 ? '' : ' (skipped: no python3)'}`, () => {
  let python: string;
  let files: string;
  let upstream: AgentUpstream;
  let proxy: RunningServer;
  const outcomes = new Map<string, { turns: PyTurn[]; error?: string }>();

  beforeAll(async () => {
    python = ensureOpenAIPython();
    files = mkdtempSync(join(tmpdir(), 'compactor-py-loop-'));
    writeLoopFiles(files, STEPS, RESULT_TOKENS);
    upstream = await startAgentUpstream({ window: WINDOW, script: loopScript(STEPS) });
    proxy = await startServer({ port: 0, capacity: WINDOW, openaiUpstream: upstream.url });
    await Promise.all(
      LOOPS.map(async (loop) => {
        const config = {
          base_url: `${proxy.url}/v1`,
          ...loop,
          model: 'gpt-4.1',
          system: LOOP_SYSTEM,
          task: LOOP_TASK,
          files,
          max_turns: STEPS + 5,
          headers: { 'x-compactor-session': `py-${loop.api}-${loop.stream ? 'stream' : 'plain'}` },
        };
        const name = `${loop.api} ${loop.stream ? 'stream' : 'plain'}`;
        try {
          const { stdout } = await promisify(execFile)(
            python,
            [join(import.meta.dirname, 'openai_loop.py'), JSON.stringify(config)],
            { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
          );
          outcomes.set(name, {
            turns: stdout
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as PyTurn),
          });
        } catch (e) {
          const err = e as { stderr?: string; message: string };
          outcomes.set(name, {
            turns: [],
            error: (err.stderr || err.message).trim().split('\n').slice(-3).join(' | '),
          });
        }
      }),
    );
  });

  afterAll(async () => {
    await proxy?.close();
    await upstream?.close(); // rejects when any request went over the window
    if (files) rmSync(files, { recursive: true, force: true });
    freeAuditEncoder();
  });

  /** The upstream requests of one loop: its protocol and its stream flag tell them apart. */
  const turnsOf = (api: string, stream: boolean): AgentTurn[] =>
    upstream.turns.filter(
      (t) =>
        t.answered !== 'summary' &&
        t.protocol === (api === 'chat' ? 'openai-chat' : 'openai-responses') &&
        (t.request.body?.stream === true) === stream,
    );

  test.each(LOOPS)(
    '$api stream=$stream: the loop finishes with every call and event intact',
    ({ api, stream }) => {
      const { turns, error } = outcomes.get(`${api} ${stream ? 'stream' : 'plain'}`)!;
      expect(error).toBeUndefined();
      expect(turns.at(-1)?.final).toBe(LOOP_ANSWER);
      const steps = turns.slice(0, -2);
      expect(steps).toHaveLength(STEPS);
      steps.forEach((t, n) => {
        expect(t.calls).toEqual([
          { id: `call_s${n}`, name: 'read_file', arguments: JSON.stringify({ path: `file-${n}.txt` }) },
        ]);
        if (stream) expect(t.intact).toBe(true);
      });
    },
  );

  test.each(LOOPS)(
    'H1/N1: $api stream=$stream: every upstream request fits the window, keeps pairing and the task, in step order',
    ({ api, stream }) => {
      const audit = auditTurns(turnsOf(api, stream), WINDOW);
      expect(audit.steps).toEqual([...Array.from({ length: STEPS }, (_, n) => n), 'final']);
      expect(audit.overWindow).toBe(0);
      expect(audit.largest).toBeLessThanOrEqual(WINDOW);
      expect(audit.badPairing).toBe(0);
      expect(audit.taskMissing).toBe(0);
      expect(upstream.violations).toEqual([]);
    },
  );

  test.each(LOOPS)(
    '$api stream=$stream: the usage the client sees is that of what was really sent',
    ({ api, stream }) => {
      const { turns } = outcomes.get(`${api} ${stream ? 'stream' : 'plain'}`)!;
      const answered = turns.slice(0, -1).map((t) => upstream.turns[Number(/t(\d+)$/.exec(t.id)?.[1])]);
      expect(answered.map((t) => t?.answered)).toEqual([
        ...Array.from({ length: STEPS }, (_, n) => n),
        'final',
      ]);
      const sent = answered.map((t) => estimateBodyTokens(t.request.body));
      expect(turns.slice(0, -1).map((t) => t.usage)).toEqual(sent);
      // The history the client resent grew past the window; what reached the model did not.
      expect(Math.max(...sent)).toBeLessThan(WINDOW);
      expect(STEPS * RESULT_TOKENS).toBeGreaterThan(4 * WINDOW);
    },
  );
});
