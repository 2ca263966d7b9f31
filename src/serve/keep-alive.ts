import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long the proxy keeps a client's idle connection open: longer than clients keep theirs
 * (undici and Node's fetch, under the OpenAI and Anthropic SDKs: what the server advertises
 * less 2 s, else 4 s; Node's http agent and Python's httpx 5 s; Rust's hyper and Go 90 s), so
 * a client does not send on a connection the proxy is closing.
 */
export const KEEP_ALIVE_MS = 100_000;

/**
 * Keeps idle client connections open `ms`, and closes one only after the loop has read what
 * came in on it. A loop held up past the timeout (many large requests at once) runs its timers
 * before it reads its sockets: a request the client sent in time on an idle connection would
 * be lost with it, and the client would see "other side closed".
 */
export function holdIdleConnections(server: Server, ms = KEEP_ALIVE_MS): void {
  server.keepAliveTimeout = ms;
  // With a listener here Node leaves timed-out connections to us.
  server.on('timeout', (socket: Socket) => {
    const seen = socket.bytesRead;
    // Runs after the loop's next read of its sockets: a connection that got nothing closes.
    setImmediate(() => {
      if (socket.bytesRead === seen) socket.destroy();
    });
  });
}
