import { readFileSync } from 'node:fs';
import WebSocket from 'ws';

/*
 * The memory of a child process after a full collection, asked through its inspector (started
 * with `--inspect=127.0.0.1:0`): the product needs no debug route for the bench to see what
 * is really held, rather than garbage not yet collected.
 */

/** Where a child started with `--inspect` listens, from its output; put before its ready line. */
export const INSPECTOR_URL = /Debugger listening on (ws:\/\/\S+)/;

/** What a process holds, in bytes: resident (the kernel's count) and what the engine accounts for. */
export interface ProcessMemory {
  rss: number;
  heapUsed: number;
  /** Memory of C++ objects bound to JavaScript ones, ArrayBuffers included. */
  external: number;
  arrayBuffers: number;
}

/** Resident memory of a process in bytes (Linux), else NaN. */
export function residentBytes(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

interface Reply {
  id: number;
  result?: { result?: { value?: unknown }; profile?: unknown };
  error?: { message: string };
}

/** A connection to one process's inspector. */
export interface Inspector {
  /** A full collection, then what the process holds. */
  memoryAfterCollection(pid: number | undefined): Promise<ProcessMemory>;
  /** The value of an expression evaluated in the process (one that JSON can carry). */
  evaluate(expression: string): Promise<unknown>;
  /** Calls an inspector method: its result. */
  post(method: string, params?: object): Promise<unknown>;
  /** Starts the process's CPU profiler (one sample a millisecond). */
  startProfile(): Promise<void>;
  /** Stops it: the profile, as a .cpuprofile file holds it. */
  stopProfile(): Promise<unknown>;
  close(): Promise<void>;
}

export async function openInspector(url: string): Promise<Inspector> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const waiting = new Map<number, (r: Reply) => void>();
  socket.on('message', (data: Buffer) => {
    const reply = JSON.parse(data.toString('utf8')) as Reply;
    waiting.get(reply.id)?.(reply);
    waiting.delete(reply.id);
  });
  let next = 0;
  const call = (method: string, params: object = {}) =>
    new Promise<Reply>((resolve, reject) => {
      const id = ++next;
      waiting.set(id, (r) => (r.error ? reject(new Error(`${method}: ${r.error.message}`)) : resolve(r)));
      socket.send(JSON.stringify({ id, method, params }));
    });
  const evaluate = async (expression: string) => {
    const reply = await call('Runtime.evaluate', {
      expression,
      returnByValue: true,
      includeCommandLineAPI: true,
    });
    return reply.result?.result?.value;
  };
  return {
    evaluate,
    post: async (method, params) => (await call(method, params)).result,
    async startProfile() {
      await call('Profiler.enable');
      await call('Profiler.setSamplingInterval', { interval: 1_000 });
      await call('Profiler.start');
    },
    async stopProfile() {
      return (await call('Profiler.stop')).result?.profile;
    },
    async memoryAfterCollection(pid) {
      // Twice: what the first one frees may let go of more (weak maps, finalizers).
      await call('HeapProfiler.collectGarbage');
      await call('HeapProfiler.collectGarbage');
      const usage = (await evaluate('process.memoryUsage()')) as NodeJS.MemoryUsage;
      return {
        rss: residentBytes(pid),
        heapUsed: usage.heapUsed,
        external: usage.external,
        arrayBuffers: usage.arrayBuffers,
      };
    },
    async close() {
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.close();
      await closed;
    },
  };
}
