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
  /**
   * The task that needs the past: the final answer is the marker line of the first file, which
   * the model gives only when it sees it (recalling it when it was cleared).
   */
  needsPast?: boolean;
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

/** The file whose marker line the task that needs the past asks for. */
export const PAST_FILE = 0;

/** The task's goal line (what "task present" looks for) and the prompt the agent gets. */
export function taskOf(
  files: number,
  seed: number,
  needsPast = false,
): { goal: string; prompt: string; marker: string } {
  const hex = seed.toString(16).toUpperCase();
  const marker = needsPast ? `NEEDLE-${hex}-PAST` : `MATRIX-${hex}-DONE`;
  const what = needsPast ? `the marker line of ${fileName(PAST_FILE)}` : 'the task marker';
  const goal = `Read each of the ${files} files ${fileName(0)} to ${fileName(files - 1)} in this directory, one per turn, then report ${what}.`;
  return { goal, prompt: `${goal}\nUse your file-reading tool; do not skip a file.`, marker };
}

/**
 * A file's text: its number, its marker line when it has one, then source text. The marker
 * comes first because agents shorten long outputs themselves (Codex keeps a command's start
 * and end): every agent's own read must show it.
 */
function fileText(n: number, files: number, body: string, marker?: string): string {
  return `File ${n + 1} of ${files}.\n${marker === undefined ? '' : `Marker: ${marker}\n`}${body}\n`;
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
  const needsPast = spec.needsPast === true;
  const { goal, prompt, marker } = taskOf(spec.files, spec.seed, needsPast);
  sizes(spec.files, spec.seed).forEach((tokens, n) => {
    const text = source.read(n, tokens);
    const holds = needsPast && n === PAST_FILE ? marker : undefined;
    writeFileSync(join(work, fileName(n)), fileText(n, spec.files, text, holds));
  });
  const finalAnswer = needsPast
    ? `All ${spec.files} files were read. The marker line of ${fileName(PAST_FILE)}: ${marker}`
    : `All ${spec.files} files were read. Task marker: ${marker}`;
  const model = await startMatrixModel({
    // The direct run has no window: it is the baseline of what the agent sends by itself.
    window: spec.window ?? UNCHECKED_OVERFLOW_TEST,
    task: {
      steps: spec.files,
      tool: { name: agent.tool.name, args: (n) => agent.tool.args(join(work, fileName(n))) },
      finalAnswer,
      goal,
      ...(needsPast
        ? {
            needsPast: {
              file: PAST_FILE,
              marker,
              name: fileName(PAST_FILE),
              missing: `All ${spec.files} files were read. The marker line of ${fileName(PAST_FILE)} is no longer in my context.`,
            },
          }
        : {}),
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
      // An agent's output shows the files it read too, the marker line among them: the model must
      // also have answered with it (it does only when the marker reached it).
      answered:
        run.stdout.includes(marker) &&
        (!needsPast || model.turns.some((t) => t.answered === 'final' && t.text === finalAnswer)),
      stderrTail: run.code === 0 ? '' : run.stderr.trim().split('\n').slice(-6).join('\n').slice(-1_500),
      wallSeconds,
      ...measureCell(model, relay.exchanges, goal, spec.window, needsPast ? marker : undefined),
    };
  } finally {
    // COMPACTOR_MATRIX_DUMP=DIR keeps what the model received, one JSON file per cell, to look into.
    const dump = process.env.COMPACTOR_MATRIX_DUMP;
    if (dump) {
      mkdirSync(dump, { recursive: true });
      const name = `${agent.id}-${spec.window ?? 'direct'}${needsPast ? '-past' : ''}.json`;
      writeFileSync(
        join(dump, name),
        JSON.stringify(
          model.requests.map((r) => ({ path: r.path, headers: r.headers, body: r.body, raw: r.raw })),
        ),
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
