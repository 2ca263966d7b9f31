// A TypeScript consumer of the installed package: type-checked under a strict nodenext
// and a strict bundler tsconfig, bundled with esbuild, and run. It uses the root entry and
// every unstable building-block entry (formats, machines, projection, providers, store).
// Usage (bundled): node consumer.mjs SESSION_FILE. Prints one JSON line.
import {
  createCompactorSession,
  createEstimator,
  msg,
  type CompactorSessionOptions,
  type Message,
  type SessionCompactionReport,
} from 'context-compactor';
import { readSessionFile } from 'context-compactor/unstable/formats';
import {
  compactionMachine,
  turnMachine,
  type CompactionStrategy,
  type Failure,
} from 'context-compactor/unstable/machines';
import { projectRequest, type ProjectedRequest } from 'context-compactor/unstable/projection';
import { OFFLINE_CONTEXT_WINDOW } from 'context-compactor/unstable/providers';
import { openSessionStore, type SessionStore } from 'context-compactor/unstable/store';

const sessionFile = process.argv[2];
if (sessionFile === undefined) throw new Error('usage: consumer SESSION_FILE');
const first = readSessionFile(sessionFile).sessions[0];
if (first === undefined) throw new Error(`${sessionFile}: no session`);
const history: readonly Message[] = first.messages;

const projected: ProjectedRequest = projectRequest(history, {
  limits: { capacity: 64_000, trigger: 20_000 },
  estimator: createEstimator(),
});

const options: CompactorSessionOptions = {
  route: { provider: 'offline' },
  limits: { capacity: 32_000, reservedOutput: 2_000 },
  history: [...history, msg.user('Summarize what was fixed.')],
};
const session = createCompactorSession(options);
const request = session.prepareRequest();
const report: SessionCompactionReport = await session.compact({
  instructions: 'Keep the failing test names.',
});
session.close();

const noFailure: Failure | undefined = undefined;
const strategy: CompactionStrategy = session.route.strategy.kind;
const openStore: (dir: string) => SessionStore = openSessionStore;
console.log(
  JSON.stringify({
    projection: {
      before: projected.diagnostics.originalTokens,
      after: projected.diagnostics.projectedTokens,
    },
    request: request.messages.length,
    compacted: report.message,
    machines: [compactionMachine.id, turnMachine.id],
    failure: noFailure ?? null,
    strategy,
    offlineWindow: OFFLINE_CONTEXT_WINDOW,
    store: typeof openStore,
  }),
);
