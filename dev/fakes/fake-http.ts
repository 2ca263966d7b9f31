/**
 * Core of the fake provider servers (real node:http on 127.0.0.1, random port).
 *
 * Every request is recorded (method, path, lower-cased headers, parsed JSON body) so tests
 * can assert exact payloads and headers. Each request consumes the next entry of the
 * server's `script` (a queue of {@link Fault}s; `undefined` or `{kind:'ok'}` = normal
 * answer), so failures are injected per request in order.
 *
 * Used through the provider-specific servers: fake-openai.ts (Responses, /responses/compact,
 * Chat Completions; also the xAI flavour) and fake-anthropic.ts (Messages).
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { windowOverflow, type WindowOverflow } from './fake-window.js';

/** The error bodies providers answer a request over the context window with, one shape per provider. */
export type OverflowShape =
  | 'openai-responses'
  | 'openai-chat'
  | 'deepseek'
  | 'vllm'
  | 'gemini'
  | 'openrouter'
  | 'groq'
  | 'xai'
  | 'anthropic'
  | 'anthropic-413';

/** Context overflow delivered inside a 200 stream, as an error event rather than an error status. */
export type StreamOverflowShape =
  'responses-nested' | 'responses-flat' | 'responses-failed' | 'anthropic' | 'chat';

/** One scripted behaviour for one request. */
export type Fault =
  | { kind: 'ok' }
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'rate-limit'; retryAfter?: string; retryAfterMs?: string }
  | { kind: 'server-error'; status?: number }
  | { kind: 'hang' }
  /**
   * Answers normally once `until` settles (the test decides when); `onHeld` runs when the
   * request arrived, `onClosed` when its connection closed (answered, or the client aborted).
   */
  | { kind: 'hold'; until: Promise<unknown>; onHeld?: () => void; onClosed?: () => void }
  | { kind: 'reset' }
  | { kind: 'malformed-json' }
  | { kind: 'bad-shape' }
  | { kind: 'truncated-stream' }
  | {
      kind: 'stream-error';
      errorType?: string;
      /** Chat only: the `error.code` (OpenRouter sends numbers). */ code?: number | string;
    }
  | { kind: 'empty-summary' }
  /** The summary (generate) answer carries this text instead of the server's default. */
  | { kind: 'summary-text'; text: string }
  | { kind: 'length' }
  | { kind: 'overflow'; shape: OverflowShape }
  | { kind: 'stream-overflow'; shape: StreamOverflowShape }
  | { kind: 'compaction-null' }
  | { kind: 'no-compaction' }
  | { kind: 'rejected-edit' };

/** What the server saw. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined when the body was not JSON). */
  body: any;
  /** The body exactly as it arrived (for byte-level checks). */
  raw: string;
}

/**
 * The context window a fake server holds every request to (dev/fakes/fake-window.ts), required of every
 * test that starts one: the window the test's session or CLI is configured
 * with. `UNCHECKED_OVERFLOW_TEST` is the named opt-out for a test whose client must send an
 * oversized request on purpose; each use says why next to it.
 */
export type DeclaredWindow = number | typeof UNCHECKED_OVERFLOW_TEST;
export const UNCHECKED_OVERFLOW_TEST = 'unchecked-overflow-test';

/** What every fake server factory requires: the window it holds requests to. */
export interface FakeWindowOptions {
  window: DeclaredWindow;
  /**
   * False: requests are answered but not kept in `requests` (a load bench's upstream, whose
   * bodies would otherwise fill its own heap for the whole run). Default true.
   */
  keep?: boolean;
}

/**
 * The answer to a request over the window; by default a `fake_window_exceeded` 400 that names
 * the fake, or the provider's own "prompt is too long" error for a client that must react to it.
 */
export type OverflowAnswer = (path: string, over: WindowOverflow) => { status: number; body: unknown };

/** A running fake server. `url` is the base URL (ends in `/v1`). */
export interface FakeServer {
  url: string;
  requests: RecordedRequest[];
  /**
   * Every request as it began (its headers arrived), before its body was read: the order
   * requests were sent in, where `requests` has the order their bodies finished.
   */
  arrivals: Array<{ path: string; bytes: number }>;
  /**
   * The window requests are checked against; a test that configures its session with another
   * capacity than the file's default sets it to that capacity before the session sends.
   */
  window: DeclaredWindow;
  /** Remaining scripted faults; push more at any time. */
  script: (Fault | undefined)[];
  /** Requests that exceeded the declared window (see dev/fakes/fake-window.ts); `close()` rejects when any. */
  violations: string[];
  close(): Promise<void>;
}

/**
 * Picks a request's fault by what it holds, before the script is consulted: for a test whose
 * requests arrive in no fixed order (many sessions at once) and that must hold one of them.
 */
export interface FaultChooser {
  faultFor?: (req: RecordedRequest) => Fault | undefined;
}

/** Handler for one request, given its scripted fault (undefined = normal). */
export type FakeHandler = (req: RecordedRequest, fault: Fault | undefined, res: ServerResponse) => void;

/** Sends a JSON response. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** One SSE frame; `event` omitted for data-only (Chat Completions) streams. */
export interface FakeSseEvent {
  event?: string;
  data: unknown;
}

/** Sends an SSE stream; with `truncateAfter`, stops after that many frames without a terminal event. */
export function sendSse(res: ServerResponse, events: FakeSseEvent[], truncateAfter?: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const frames = truncateAfter === undefined ? events : events.slice(0, truncateAfter);
  for (const e of frames) {
    const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
    res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${data}\n\n`);
  }
  res.end();
}

/**
 * A response whose writes after the first (and its end) each wait for `before()`, in order:
 * a stream paced like a model that writes as it generates, or held by a test until the client
 * has read the first event. With `last`, writes go at once up to the first one `last` picks.
 * Everything else goes to `res` as is.
 */
export function heldWrites(
  res: ServerResponse,
  before: () => Promise<void>,
  last: (chunk: string) => boolean = () => true,
): ServerResponse {
  let free = true;
  let chain = Promise.resolve();
  const queued = (chunk: string | undefined, f: () => void) => {
    if (free) {
      free = !last(chunk ?? '');
      return f();
    }
    chain = chain.then(before).then(f);
  };
  return new Proxy(res, {
    get(target, prop, receiver) {
      if (prop === 'write') return (chunk: string) => (queued(chunk, () => target.write(chunk)), true);
      if (prop === 'end') return (chunk?: string) => (queued(chunk, () => target.end(chunk)), target);
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Handles the faults every provider shares; returns true when the response was sent. */
export function handleCommonFault(fault: Fault | undefined, res: ServerResponse): boolean {
  if (!fault) return false;
  switch (fault.kind) {
    case 'status':
      sendJson(res, fault.status, fault.body ?? {}, fault.headers);
      return true;
    case 'server-error':
      sendJson(res, fault.status ?? 500, {
        error: { message: 'The server had an error', type: 'server_error', param: null, code: null },
      });
      return true;
    case 'hang':
      return true; // never answer; the client's timeout or abort must end it
    case 'reset':
      res.socket?.destroy();
      return true;
    case 'malformed-json':
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"id":"resp_1","output":[{"type":"message"');
      return true;
    default:
      return false;
  }
}

/** Listens on 127.0.0.1 (a random port): the base URL (`/v1`) and a close that ends every connection. */
export async function listenLocal(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}

/** Starts a fake server on 127.0.0.1 with a random port. */
export async function startFakeServer(
  handler: FakeHandler,
  script: (Fault | undefined)[] = [],
  options: FakeWindowOptions & FaultChooser & { overflowAnswer?: OverflowAnswer },
): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const arrivals: FakeServer['arrivals'] = [];
  const violations: string[] = [];
  const state = { script: [...script], window: options.window };
  const server = createServer((req, res) => {
    arrivals.push({ path: req.url ?? '', bytes: Number(req.headers['content-length'] ?? 0) });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = undefined;
      }
      const rec: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        raw,
      };
      if (options.keep !== false) requests.push(rec);
      const over =
        state.window === UNCHECKED_OVERFLOW_TEST ? null : windowOverflow(rec.path, body, state.window);
      if (over !== null) {
        violations.push(over.message);
        const answer = options.overflowAnswer?.(rec.path, over) ?? {
          status: 400,
          body: { error: { type: 'fake_window_exceeded', message: over.message } },
        };
        sendJson(res, answer.status, answer.body);
        return;
      }
      const fault = options.faultFor?.(rec) ?? state.script.shift();
      const answer = (f: Fault | undefined) => {
        try {
          handler(rec, f?.kind === 'ok' ? undefined : f, res);
        } catch (e) {
          sendJson(res, 500, { error: { message: `fake server bug: ${(e as Error).message}` } });
        }
      };
      if (fault?.kind === 'hold') {
        const { onClosed } = fault;
        if (onClosed) res.on('close', () => onClosed());
        fault.onHeld?.();
        // The client may have gone (abort, timeout) by then: answering a closed socket is harmless.
        void fault.until.then(
          () => !res.destroyed && answer(undefined),
          () => !res.destroyed && answer(undefined),
        );
      } else answer(fault);
    });
  });
  // No server-side idle timeout: on a loaded machine the client's keep-alive timer can fire
  // late and reuse a socket the server has just closed (ECONNRESET). The client closes idle
  // sockets itself, and close() ends all connections.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: FakeServer = {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    arrivals,
    violations,
    get script() {
      return state.script;
    },
    set script(v) {
      state.script = v;
    },
    get window() {
      return state.window;
    },
    set window(v) {
      state.window = v;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => {
          if (e) reject(e);
          else if (violations.length > 0) reject(new Error(violations.join('\n')));
          else resolve();
        });
      }),
  };
  return fake;
}

/**
 * Closes every server even when one reports window violations (a rejected close() must not
 * leave the others listening, which kept jest from exiting), then rejects with all of them.
 */
export async function closeAll(...servers: (FakeServer | undefined)[]): Promise<void> {
  const results = await Promise.allSettled(servers.map((s) => s?.close()));
  const errors = results.flatMap((r) =>
    r.status === 'rejected' ? [String((r.reason as Error).message)] : [],
  );
  if (errors.length > 0) throw new Error(errors.join('\n'));
}

/** Error bodies for context overflow in each provider's real shape. */
export function overflowBody(shape: OverflowShape): { status: number; body: unknown } {
  switch (shape) {
    case 'openai-responses':
      return {
        status: 400,
        body: {
          error: {
            type: 'invalid_request_error',
            code: 'context_length_exceeded',
            message:
              'Your input exceeds the context window of this model. Please adjust your input and try again.',
            param: 'input',
          },
        },
      };
    case 'openai-chat':
      return {
        status: 400,
        body: {
          error: {
            message:
              "This model's maximum context length is 4097 tokens. However, your messages resulted in 4294 tokens. Please reduce the length of the messages.",
            type: 'invalid_request_error',
            param: 'messages',
            code: 'context_length_exceeded',
          },
        },
      };
    case 'deepseek':
      return {
        status: 400,
        body: {
          error: {
            message:
              "This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.",
            type: 'invalid_request_error',
            param: null,
            code: 'invalid_request_error',
          },
        },
      };
    case 'vllm':
      return {
        status: 400,
        body: {
          object: 'error',
          message:
            "This model's maximum context length is 32768 tokens. However, you requested 41648 tokens (37552 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.",
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      };
    case 'gemini':
      return {
        status: 400,
        body: [
          {
            error: {
              code: 400,
              message:
                'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).',
              status: 'INVALID_ARGUMENT',
              details: [],
            },
          },
        ],
      };
    case 'openrouter':
      return {
        status: 400,
        body: {
          error: {
            code: 400,
            message:
              'This endpoint\'s maximum context length is 32768 tokens. However, you requested about 42832 tokens (42832 of text input). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
          },
        },
      };
    case 'groq':
      return {
        status: 400,
        body: {
          error: {
            message: 'Please reduce the length of the messages or completion.',
            type: 'invalid_request_error',
            param: 'messages',
            code: 'context_length_exceeded',
          },
        },
      };
    case 'xai':
      return {
        status: 400,
        body: {
          code: 'Client specified an invalid argument',
          error: "This model's maximum prompt length is 131072 but the request contains 136973 tokens.",
        },
      };
    case 'anthropic':
      return {
        status: 400,
        body: {
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: 'prompt is too long: 219898 tokens > 200000 maximum',
          },
          request_id: 'req_fake',
        },
      };
    case 'anthropic-413':
      return {
        status: 413,
        body: {
          type: 'error',
          error: {
            type: 'request_too_large',
            message: 'Request exceeds the maximum allowed number of bytes.',
          },
        },
      };
  }
}
