import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runCell, type CellResult } from './cell.js';

/*
 * One agent's row of the matrix: its direct run (the baseline), then a run through the proxy
 * at each window that holds its first request (its own system prompt, tools and the task).
 * A row runs in a child process of its own — in a network namespace with only loopback when
 * `unshare -n` works, so an agent can reach nothing but the proxy and the model — and a crash
 * there costs only that row.
 */

export interface RowSpec {
  agent: string;
  windows: number[];
  /** Windows to run the task that needs the past at (after the others; those that hold its first request). */
  pastWindows?: number[];
  files: number;
  seed: number;
  limitSeconds: number;
}

export interface AgentRow {
  agent: string;
  direct?: CellResult;
  cells: CellResult[];
  /** The task that needs the past, through the proxy. */
  past?: CellResult[];
  /** Windows not run, each with why. */
  skipped: Array<{ window: number; reason: string }>;
  /** Why the row could not run at all. */
  error?: string;
  /** The agent could reach only loopback (its run was in a network namespace). */
  isolated?: boolean;
}

/** Runs a row in this process. */
export async function runRowHere(spec: RowSpec): Promise<AgentRow> {
  const base = mkdtempSync(join(tmpdir(), `compactor-matrix-${spec.agent}-`));
  try {
    return await runCells(spec, join(base, 'run'));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

async function runCells(spec: RowSpec, root: string): Promise<AgentRow> {
  const { agent, files, seed, limitSeconds } = spec;
  const cell = (window: number | null, needsPast = false) =>
    runCell({ agent, window, files, seed, limitSeconds, root, needsPast });
  const direct = await cell(null);
  const row: AgentRow = { agent: spec.agent, direct, cells: [], skipped: [], past: [] };
  // Its first request with nothing but the task in it: what no window below can hold.
  const first = direct.fixedPart;
  const reason = `its first request alone (system prompt, tools, task) is ${first.toLocaleString('en-US')} tokens`;
  for (const window of spec.windows) {
    if (first > window) row.skipped.push({ window, reason });
    else row.cells.push(await cell(window));
  }
  for (const window of spec.pastWindows ?? []) if (first <= window) row.past!.push(await cell(window, true));
  return row;
}

let namespaces: boolean | undefined;

/** Whether `unshare -n` gives this process a network namespace it can bring loopback up in. */
function canIsolate(): boolean {
  namespaces ??=
    spawnSync('unshare', ['-n', '--', 'ip', 'link', 'set', 'lo', 'up'], { stdio: 'ignore' }).status === 0;
  return namespaces;
}

/** Runs a row in a child process (isolated when it can be); never rejects: a failure is the row's `error`. */
export function runRow(spec: RowSpec): Promise<AgentRow> {
  const script = fileURLToPath(import.meta.url);
  const node = [process.execPath, '--import', 'tsx', script, JSON.stringify(spec)];
  const isolated = canIsolate();
  const [command, args] = isolated
    ? ['unshare', ['-n', '--', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', ...node]]
    : [node[0], node.slice(1)];
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const failed = (error: string): AgentRow => ({ agent: spec.agent, cells: [], skipped: [], error });
    child.on('error', (e) => resolve(failed(e.message)));
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      try {
        const row = JSON.parse(last) as AgentRow;
        resolve({ ...row, isolated });
      } catch {
        const why = stderr.trim().split('\n').slice(-3).join(' / ') || `exit ${code}`;
        resolve(failed(`the row's process ended without a result: ${why.slice(0, 500)}`));
      }
    });
  });
}

// Run as a program: the row's spec as JSON in argv[2], the row as JSON on the last stdout line.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const spec = JSON.parse(process.argv[2] ?? '{}') as RowSpec;
  runRowHere(spec).then(
    (row) => process.stdout.write(`\n${JSON.stringify(row)}\n`),
    (e: Error) => {
      const row: AgentRow = { agent: spec.agent, cells: [], skipped: [], error: e.message.split('\n')[0] };
      process.stdout.write(`\n${JSON.stringify(row)}\n`);
    },
  );
}
