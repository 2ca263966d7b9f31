import { protocolOfPath, type WireProtocol } from '../fakes/agent-upstream.js';
import { estimateBodyTokens, requestedOutputTokens } from '../fakes/fake-window.js';
import { tiktokenCounter } from '../../src/estimate/counters.js';
import { STUB_START } from '../../src/projection/stubs.js';
import { topLevelValueText } from '../../src/serve/json-splice.js';
import { wirePrompt } from '../fakes/wire-prompt.js';
import { auditPrompt } from '../loops/prompt-audit.js';
import { isLoopRequest, offersRecall, type MatrixModel, type MatrixTurn } from './fake-model.js';
import type { RelayedExchange } from './relay.js';

/*
 * What one cell of the matrix measured, from the requests the model received (counted with
 * tiktoken o200k over every string of the body, as the model's window check counts them) and
 * the answers the agent got (the relay's record).
 */

/** Where the prefix of consecutive loop requests changed, and what that change freed. */
export interface PrefixBreak {
  /** Index of the newer request among the loop requests. */
  at: number;
  /** Tokens of the older request no longer in the newer one (its new messages left out). */
  freed: number;
  /** A summary call of the proxy came between the two. */
  afterSummary: boolean;
  /** The agent itself made every change between its own two requests (the proxy passed them on). */
  agentOwn: boolean;
  /** No result but the newest was left uncleared: no step could have freed more. */
  clearedAll: boolean;
}

export interface CellMeasure {
  /** Model calls the agent made (through the relay). */
  agentRequests: number;
  /** Answers the agent got that the model did not send (the proxy's own errors). */
  refusals: number;
  refusalSample: string;
  /** Requests the model refused as over its window. */
  overWindow: number;
  /** Largest request the model received: input plus the output it asked for. */
  largest: number;
  /** Requests the model received to paths no provider serves. */
  misses: string[];
  /** Loop turns (tool steps and the final answer) the model answered, and the steps in order. */
  loopTurns: number;
  steps: Array<number | 'final'>;
  badPairing: number;
  taskMissing: number;
  /** Summary calls of the proxy, and the agent's own side calls (title, classifier, its own compaction). */
  summaries: number;
  sideCalls: number;
  /** Consecutive loop request pairs, those whose newer one extends the older byte for byte. */
  prefixPairs: number;
  prefixKept: number;
  breaks: PrefixBreak[];
  /** Requests the model received (summary calls aside), and those that are exactly one the agent sent (keys in any order). */
  forwarded: number;
  unchanged: number;
  /**
   * The first loop request's system prompt, tools and task (what every window must hold), the
   * tool schemas counted as their JSON text, as a provider renders them.
   */
  fixedPart: number;
  /** Input tokens of every model call the model received (summaries and side calls included). */
  upstreamTokens: number;
  /**
   * The same, summed up to and including each loop turn (the running tally), with the random
   * ids an agent writes anew in each run counted as one fixed id (see {@link runTokens}).
   */
  tally: number[];
  /**
   * Tokens of the recall tool the proxy offers beside the agent's own, over every model call:
   * left out of `upstreamTokens` and `tally` (they compare what the agent's own requests cost).
   */
  recallOffer: number;
  /**
   * The session's tool lists: how many distinct ones its loop requests and recall rounds carried
   * (1: byte for byte the same in each), over how many requests, and how many offered recall.
   */
  toolLists: { distinct: number; requests: number; offeringRecall: number };
  /** Recall calls the model made (each one the proxy answers costs one more upstream request). */
  recallRounds: number;
  /** The agent's own requests that carry a recall call: the proxy let one through to the agent. */
  recallLeaks: number;
  /** The task that needs the past: the marker was not in the first request of the final step (its file was cleared). */
  pastCleared?: boolean;
}

const isRecallTool = (t: any): boolean => t?.name === 'recall' || t?.function?.name === 'recall';

/** A request body without the recall tool the proxy offers (no agent of the matrix has one of that name). */
export function withoutRecallOffer(body: any): any {
  if (body === null || typeof body !== 'object' || !Array.isArray(body.tools)) return body;
  const tools = body.tools
    .filter((t: any) => !isRecallTool(t))
    .map((t: any) =>
      Array.isArray(t?.functionDeclarations)
        ? { ...t, functionDeclarations: t.functionDeclarations.filter((d: any) => !isRecallTool(d)) }
        : t,
    )
    .filter((t: any) => !Array.isArray(t?.functionDeclarations) || t.functionDeclarations.length > 0);
  return { ...body, tools };
}

/** The ids an agent draws at random in each run (session, thread, message ids): UUIDs. */
const RANDOM_ID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const FIXED_ID = '00000000-0000-0000-0000-000000000000';

/**
 * A request's tokens as two runs of one agent compare them: the recall offer left out and every
 * random id written as one fixed id. Codex writes about ten UUIDs into each request; they alone
 * moved its first request by up to 0.6 % from run to run, more than the running tally allows,
 * while the rest of it was the same token for token.
 */
function runTokens(body: unknown): number {
  const text = JSON.stringify(withoutRecallOffer(body) ?? null);
  return estimateBodyTokens(JSON.parse(text.replace(RANDOM_ID, FIXED_ID)));
}

/** Tokens the proxy's recall offer adds to a request body. */
function recallOfferTokens(body: any): number {
  const without = withoutRecallOffer(body);
  return without === body ? 0 : Math.max(0, estimateBodyTokens(body) - estimateBodyTokens(without));
}

/** The parts of a request that must stay the same for its prefix to be kept, and its list of items. */
function split(protocol: WireProtocol, body: any): { fixed: unknown; items: unknown[] } {
  if (protocol === 'anthropic') return { fixed: [body.system, body.tools], items: body.messages ?? [] };
  if (protocol === 'openai-chat') return { fixed: [body.tools], items: body.messages ?? [] };
  if (protocol === 'gemini')
    return { fixed: [body.systemInstruction, body.tools], items: body.contents ?? [] };
  return { fixed: [body.instructions, body.tools], items: Array.isArray(body.input) ? body.input : [] };
}

/** JSON of a value without cache markers, which move every turn and are no part of the cached text. */
const canon = (v: unknown): string =>
  JSON.stringify(v ?? null, (k, x: unknown) => (k === 'cache_control' ? undefined : x));

/** Item positions of `prev` that `next` holds otherwise, and whether the fixed part changed. */
function changes(protocol: WireProtocol, prev: unknown, next: unknown): { items: number[]; fixed: boolean } {
  const a = split(protocol, prev ?? {});
  const b = split(protocol, next ?? {});
  const items: number[] = [];
  a.items.forEach((it, k) => {
    if (canon(it) !== canon(b.items[k])) items.push(k);
  });
  return { items, fixed: canon(a.fixed) !== canon(b.fixed) };
}

/**
 * Whether an item of `a` stands at another position in `b`: older messages were left out before
 * it (and as many new ones came after), so the positions no longer pair the same items.
 */
function shifted(a: readonly unknown[], b: readonly unknown[]): boolean {
  const at = new Map<string, Set<number>>();
  a.forEach((it, k) => {
    const key = canon(it);
    at.set(key, (at.get(key) ?? new Set()).add(k));
  });
  return b.some((it, j) => {
    const ks = at.get(canon(it));
    return ks !== undefined && !ks.has(j);
  });
}

/** How a clearing stub begins, as it reads inside a request's JSON text (a string in a string). */
const STUB_IN_JSON = JSON.stringify(STUB_START).slice(1, -1);

/** An item that holds a tool's result the proxy has not cleared (a shortened preview counts: it could go). */
function unclearedResult(item: unknown): boolean {
  const text = canon(item);
  return (
    /"tool_result"|"function_call_output"|"role":"tool"|"functionResponse"/.test(text) &&
    !text.includes(STUB_IN_JSON) &&
    !text.includes(STUB_START)
  );
}

/**
 * Whether `next` extends `prev` byte for byte; else what the change freed (the changed items'
 * tokens before less after, those the agent changed itself aside), whether the agent made all
 * of it (`own`: its own two requests, `agentPrev` and `agentNext`, changed the same items), and
 * whether it left no older result uncleared.
 */
function comparePrefix(
  protocol: WireProtocol,
  prev: MatrixTurn,
  next: MatrixTurn,
  agentPrev: unknown,
  agentNext: unknown,
): { kept: boolean; freed: number; own: boolean; clearedAll: boolean } {
  const a = split(protocol, prev.request.body ?? {});
  const b = split(protocol, next.request.body ?? {});
  const ours = changes(protocol, prev.request.body, next.request.body);
  if (!ours.fixed && ours.items.length === 0 && a.items.length <= b.items.length)
    return { kept: true, freed: 0, own: false, clearedAll: false };
  const theirs =
    agentPrev !== undefined && agentNext !== undefined
      ? changes(protocol, agentPrev, agentNext)
      : { items: [], fixed: false };
  const byAgent = new Set(theirs.items);
  const proxyItems = ours.items.filter((k) => !byAgent.has(k));
  const own = proxyItems.length === 0 && (!ours.fixed || theirs.fixed) && a.items.length <= b.items.length;
  // Only the newest result may stand uncleared (older ones left out count as cleared).
  const clearedAll = b.items.filter(unclearedResult).length <= 1;
  if (a.items.length <= b.items.length && !shifted(a.items, b.items)) {
    // Items stay where they were (a clearing step replaces them in place): sum what each lost.
    let freed = proxyItems.reduce(
      (n, k) => n + estimateBodyTokens(a.items[k]) - estimateBodyTokens(b.items[k]),
      0,
    );
    if (ours.fixed && !theirs.fixed) freed += estimateBodyTokens(a.fixed) - estimateBodyTokens(b.fixed);
    return { kept: false, freed, own, clearedAll };
  }
  // Items went (a summary took their place, or older exchanges were left out): the older request
  // less what the newer kept of it. The new items are the last ones: as many as the agent added
  // between its own two requests, else those after the last item the older request also had.
  const seen = new Set(a.items.map(canon));
  let last = -1;
  b.items.forEach((x, i) => {
    if (seen.has(canon(x))) last = i;
  });
  const added =
    agentPrev !== undefined && agentNext !== undefined
      ? split(protocol, agentNext).items.length - split(protocol, agentPrev).items.length
      : -1;
  const from = added >= 0 && added <= b.items.length ? b.items.length - added : last + 1;
  // What the new items add to the request (as items of a list, as the window counts them).
  const tail = estimateBodyTokens(b.items.slice(from));
  return { kept: false, freed: prev.input - (next.input - tail), own, clearedAll };
}

/** JSON with keys sorted: the same request whatever order a serializer wrote its fields in. */
function sortedJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : x,
  );
}

function parsedOrNull(text: string | undefined): unknown {
  try {
    return text === undefined ? null : (JSON.parse(text) as unknown);
  } catch {
    return null;
  }
}

const o200k = tiktokenCounter('o200k_base');

function fixedPartTokens(body: any): number {
  const { tools, ...rest } = (body ?? {}) as Record<string, unknown>;
  return estimateBodyTokens(rest) + (tools === undefined ? 0 : o200k.count(JSON.stringify(tools)));
}

const isLoop = (t: MatrixTurn) => typeof t.answered === 'number' || t.answered === 'final';

/** A request's tool list as the bytes it was sent in. */
const toolsText = (t: MatrixTurn): string => topLevelValueText(t.request.raw, 'tools') ?? '';

function toolLists(session: readonly MatrixTurn[]): CellMeasure['toolLists'] {
  return {
    distinct: new Set(session.map(toolsText)).size,
    requests: session.length,
    offeringRecall: session.filter((t) => offersRecall(t.request.body)).length,
  };
}

/** Whether an agent's request carries a call of the recall tool (JSON text of its body). */
const RECALL_CALL = /"name":\s*"recall"/;

export function measureCell(
  model: MatrixModel,
  exchanges: readonly RelayedExchange[],
  goal: string,
  window: number | null,
  pastMarker?: string,
): CellMeasure {
  const calls = model.requests.filter((r) => protocolOfPath(r.path.split('?')[0]) !== undefined);
  const agentCalls = exchanges.filter(
    (e) => protocolOfPath(e.path.split('?')[0]) !== undefined || e.status >= 400,
  );
  const errors = exchanges.filter((e) => e.status < 200 || e.status >= 300);
  const fromModel = model.violations.length + model.misses.length;
  const named = errors.filter((e) => (e.error ?? '').includes('compactor'));
  const loop = model.turns.filter(isLoop);
  // The session's requests: its loop turns and the recall rounds among them.
  const session = model.turns.filter((t) => isLoop(t) || t.answered === 'recall');
  let badPairing = 0;
  let taskMissing = 0;
  for (const t of session) {
    const a = auditPrompt(wirePrompt(t.protocol, t.request.body), goal);
    if (!a.pairingValid) badPairing++;
    if (!a.taskPresent) taskMissing++;
  }
  // The agent's own loop requests, as it sent them: one for each loop turn the model answered.
  const protocol = loop[0]?.protocol;
  const agentLoop = agentCalls
    .filter((e) => !e.path.includes('count_tokens') && !/:countTokens/.test(e.path))
    .map((e) => parsedOrNull(e.body))
    .filter((b) => b !== null && protocol !== undefined && isLoopRequest(protocol, b));
  const mapped = agentLoop.length === loop.length;
  const breaks: PrefixBreak[] = [];
  let kept = 0;
  for (let i = 1; i < loop.length; i++) {
    const c = comparePrefix(
      loop[i].protocol,
      loop[i - 1],
      loop[i],
      mapped ? agentLoop[i - 1] : undefined,
      mapped ? agentLoop[i] : undefined,
    );
    if (c.kept) kept++;
    else {
      const from = model.turns.indexOf(loop[i - 1]);
      const to = model.turns.indexOf(loop[i]);
      const afterSummary = model.turns.slice(from, to).some((t) => t.answered === 'summary');
      breaks.push({ at: i, freed: c.freed, afterSummary, agentOwn: c.own, clearedAll: c.clearedAll });
    }
  }
  const tally: number[] = [];
  let sum = 0;
  for (const t of model.turns) {
    sum += runTokens(t.request.body);
    if (isLoop(t)) tally.push(sum);
  }
  const sentByAgent = new Set(agentCalls.map((e) => sortedJson(parsedOrNull(e.body))));
  const forwarded = model.turns.filter((t) => t.answered !== 'summary');
  const unchanged = forwarded.filter((t) =>
    sentByAgent.has(sortedJson(withoutRecallOffer(t.request.body ?? null))),
  ).length;
  const recallOffer = calls.reduce((n, r) => n + recallOfferTokens(r.body), 0);
  const lastStep = session.find((t) => t.answered === 'final' || t.answered === 'recall');
  return {
    toolLists: toolLists(session),
    recallRounds: session.filter((t) => t.answered === 'recall').length,
    recallLeaks: agentCalls.filter((e) => RECALL_CALL.test(e.body ?? '')).length,
    ...(pastMarker === undefined
      ? {}
      : { pastCleared: lastStep !== undefined && !lastStep.request.raw.includes(pastMarker) }),
    agentRequests: agentCalls.length,
    forwarded: forwarded.length,
    unchanged,
    refusals: Math.max(named.length, errors.length - fromModel),
    refusalSample:
      (named[0] ?? errors.find((e) => !(e.error ?? '').includes('fake')))?.error?.slice(0, 300) ?? '',
    overWindow: window === null ? 0 : model.violations.length,
    largest: Math.max(0, ...calls.map((r) => estimateBodyTokens(r.body) + requestedOutputTokens(r.body))),
    misses: [...new Set(model.misses)],
    loopTurns: loop.length,
    steps: loop.map((t) => t.answered as number | 'final'),
    badPairing,
    taskMissing,
    summaries: model.turns.filter((t) => t.answered === 'summary').length,
    sideCalls: model.turns.filter((t) => t.answered === 'side').length,
    prefixPairs: Math.max(0, loop.length - 1),
    prefixKept: kept,
    breaks,
    fixedPart: loop[0] ? fixedPartTokens(loop[0].request.body) : 0,
    upstreamTokens: calls.reduce((n, r) => n + estimateBodyTokens(withoutRecallOffer(r.body)), 0),
    tally,
    recallOffer,
  };
}
