/**
 * Child process for the crash test (writes are atomic): writes to a session store as fast as it can and
 * prints an ack line (synchronously, to fd 1) after each durable write. The parent kills
 * it with SIGKILL at random points. Plain JavaScript over the compiled store (npm run build),
 * so it starts in a fraction of a second even on a loaded machine. With `queued` the store
 * queues its writes: the writes of one round are acked together once flush says they landed.
 * Usage: node store-crash-child.mjs DIR TAG [queued]
 */
import { writeSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import process from 'node:process';
import { msg } from '../../dist/src/messages/message.js';
import { openSessionStore } from '../../dist/src/store/index.js';

const [dir, tag, mode] = process.argv.slice(2);
const queued = mode === 'queued';
const store = openSessionStore(dir, { queued });
const held = [];
const pause = new Int32Array(new SharedArrayBuffer(4));
/**
 * Writes a line to fd 1 whole. The pipe can be full while a busy parent is slow to read
 * (EAGAIN): wait a moment and write the rest, rather than die before the kill.
 */
function say(line) {
  const bytes = Buffer.from(`${line}\n`);
  for (let done = 0; done < bytes.length;) {
    try {
      done += writeSync(1, bytes, done);
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}
const ack = (line) => (queued ? held.push(line) : say(line));
const padding = 'x'.repeat(3000);
say('ready');
for (let i = 0; i < 5000; i++) {
  store.appendMessages([msg.user(`${tag}-${i} ${padding}`), msg.assistant(`reply ${tag}-${i}`)]);
  ack(`m ${tag}-${i}`);
  if (i % 5 === 4) {
    const before = store.loadHistory();
    const after = [msg.user(`Previous conversation summary:\n- ${tag}-${i}`), ...before.slice(-2)];
    const b = store.recordCompaction({ before, after, mode: 'local', reason: 'auto', strategy: 'local' });
    ack(`b ${b.id}`);
  }
  if (i % 3 === 1) {
    store.saveSnapshot('machine', { tag, i, padding });
    ack(`s ${tag} ${i}`);
  }
  // Queued: a round of three appends is written together, and acked once it has landed.
  if (queued && i % 3 === 2) {
    await store.flush();
    for (const line of held.splice(0)) say(line);
  }
}
store.close();
