import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UNCHECKED_OVERFLOW_TEST } from '../fakes/fake-http.js';
import { sourceText } from '../loops/source-text.js';
import { SERVE } from '../../src/serve/settings.js';
import { startServer, type RunningServer } from '../../src/serve/index.js';
import { agentById, agentPath } from './agents.js';
import { startMatrixModel } from './fake-model.js';
import { installedAgent } from './install.js';
import { measureCell, type CellMeasure } from './measure.js';
import { startRelay, type RelayedExchange } from './relay.js';

/*
 * One cell of the agent matrix: an agent CLI, headless, against the matrix model, either
 * through `compactor serve --capacity <window>` or directly (the baseline), reading a set of
 * files of 2k–8k tokens one per turn. Every byte between agent and proxy goes through a relay
 * that writes down the answers the agent got.
 */

export interface CellSpec {
  agent: string;
  /** The proxy's capacity and the model's enforced window; null: the agent talks to the model directly (no window). */
  window: number | null;
  files: number;
  /** Picks the file sizes and the task's marker. */
  seed: number;
  /** A safety limit for a run that hangs (the run is waited for, never raced). */
  limitSeconds: number;
  /**
   * The folder the run works in (made empty first; default a new temporary one). The cells of
   * one row share it, so the paths an agent writes into its prompt are the same in each.
   */
  root?: string;
}

export interface CellResult extends CellMeasure {
  spec: CellSpec;
  label: string;
  exit: number | null;
  signal: string | null;
  /** The agent printed the task's final answer. */
  answered: boolean;
  /** The last lines of its standard error, when it failed. */
  stderrTail: string;
  wallSeconds: number;
}

/** A deterministic generator of the file sizes (2,000–8,000 tokens). */
function sizes(count: number, seed: number): number[] {
  let x = seed >>> 0 || 1;
  return Array.from({ length: count }, () => {
    x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0;
    return 2_000 + (x % 6_001);
  });
}

export const fileName = (n: number) => `file-${String(n + 1).padStart(2, '0')}.txt`;

/** The task's goal line (what "task present" looks for) and the prompt the agent gets. */
export function taskOf(files: number, seed: number): { goal: string; prompt: string; marker: string } {
  const marker = `MATRIX-${seed.toString(16).toUpperCase()}-DONE`;
  const goal = `Read each of the ${files} files ${fileName(0)} to ${fileName(files - 1)} in this directory, one per turn, then report the task marker.`;
  return { goal, prompt: `${goal}\nUse your file-reading tool; do not skip a file.`, marker };
}

/** Whether this proxy has a Gemini upstream setting (it routes the Gemini API itself). */
const geminiUpstream = 'geminiUpstream' in (SERVE.schema.shape as Record<string, unknown>);

/** Runs `command` to its end; kills its process group only past the safety limit. */
function runToExit(
  command: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; limitSeconds: number },
): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const limit = setTimeout(() => {
      stderr += `\n[matrix: killed after the ${opts.limitSeconds} s safety limit]`;
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    }, opts.limitSeconds * 1_000);
    child.on('error', (e) => (clearTimeout(limit), reject(e)));
    child.on('close', (code, signal) => {
      clearTimeout(limit);
      // Whatever it left running (a shell it started) goes with it.
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Runs one cell in this process. */
export async function runCell(spec: CellSpec): Promise<CellResult> {
  const agent = agentById(spec.agent);
  const installed = installedAgent(agent);
  if (!installed)
    throw new Error(`${agent.label} is not installed (npx tsx dev/agents/install.ts ${agent.id})`);
  const root = spec.root ?? mkdtempSync(join(tmpdir(), `compactor-matrix-${agent.id}-`));
  rmSync(root, { recursive: true, force: true });
  const work = join(root, 'work');
  const home = join(root, 'home');
  mkdirSync(work, { recursive: true });
  mkdirSync(home, { recursive: true });
  const source = sourceText();
  sizes(spec.files, spec.seed).forEach((tokens, n) =>
    writeFileSync(join(work, fileName(n)), `File ${n + 1} of ${spec.files}.\n${source.read(n, tokens)}\n`),
  );
  const { goal, prompt, marker } = taskOf(spec.files, spec.seed);
  const finalAnswer = `All ${spec.files} files were read. Task marker: ${marker}`;
  const model = await startMatrixModel({
    // The direct run has no window: it is the baseline of what the agent sends by itself.
    window: spec.window ?? UNCHECKED_OVERFLOW_TEST,
    task: {
      steps: spec.files,
      tool: { name: agent.tool.name, args: (n) => agent.tool.args(join(work, fileName(n))) },
      finalAnswer,
      goal,
    },
  });
  let proxy: RunningServer | undefined;
  let relayed: RelayedExchange[] = [];
  try {
    proxy =
      spec.window === null
        ? undefined
        : await startServer({
            port: 0,
            capacity: spec.window,
            anthropicUpstream: model.root,
            openaiUpstream: model.url,
            ...(geminiUpstream ? { geminiUpstream: model.root } : {}),
          });
    const relay = await startRelay(proxy?.url ?? model.root);
    relayed = relay.exchanges;
    const started = performance.now();
    let run: Awaited<ReturnType<typeof runToExit>>;
    try {
      const { args, env } = agent.start(prompt, { root: relay.root, home, work, installed });
      const bin = join(installed, agent.install.bin);
      const [command, argv] = agent.install.node ? [agent.install.node, [bin, ...args]] : [bin, args];
      run = await runToExit(command, argv, {
        cwd: work,
        env: { ...env, PATH: agentPath(agent, installed) },
        limitSeconds: spec.limitSeconds,
      });
    } finally {
      await relay.close();
    }
    const wallSeconds = (performance.now() - started) / 1_000;
    return {
      spec,
      label: agent.label,
      exit: run.code,
      signal: run.signal,
      answered: run.stdout.includes(marker),
      stderrTail: run.code === 0 ? '' : run.stderr.trim().split('\n').slice(-6).join('\n').slice(-1_500),
      wallSeconds,
      ...measureCell(model, relay.exchanges, goal, spec.window),
    };
  } finally {
    // COMPACTOR_MATRIX_DUMP=DIR keeps what the model received, one JSON file per cell, to look into.
    const dump = process.env.COMPACTOR_MATRIX_DUMP;
    if (dump) {
      mkdirSync(dump, { recursive: true });
      const name = `${agent.id}-${spec.window ?? 'direct'}.json`;
      writeFileSync(
        join(dump, name),
        JSON.stringify(model.requests.map((r) => ({ path: r.path, headers: r.headers, body: r.body }))),
      );
      // And what the agent sent, before the proxy.
      writeFileSync(
        join(dump, name.replace(/\.json$/, '.agent.json')),
        JSON.stringify(relayed.map((e) => ({ path: e.path, status: e.status, body: e.body }))),
      );
    }
    await proxy?.close();
    await model.close().catch(() => undefined); // over-window requests are counted, not thrown
    rmSync(root, { recursive: true, force: true });
  }
}

// Run as a program: the cell's spec as JSON in argv[2], its result as JSON on the last stdout line.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const spec = JSON.parse(process.argv[2] ?? '{}') as CellSpec;
  runCell(spec).then(
    (r) => process.stdout.write(`\n${JSON.stringify(r)}\n`),
    (e: Error) => {
      process.stdout.write(`\n${JSON.stringify({ error: e.message.split('\n')[0] })}\n`);
      process.exitCode = 1;
    },
  );
}
