import type { ServerResponse } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import type { ProtocolName } from './protocols.js';
import { EVENT_RULES, isObj, type EventRules, type Obj, type StreamPlace } from './recall-events.js';
import { frameData } from './recall-stream.js';
import type { UpstreamResponse } from './upstream.js';
import type { UsageTap } from './usage-tap.js';

/**
 * Passes one streamed answer of the model on to the client event by event, and holds it from
 * the event that opens a recall call: the proxy may answer that call and go on with the next
 * answer in the same stream. Events of an answer after a recall round are renumbered so that
 * the client reads one answer.
 */

/** One server-sent event as it came, with the blank line that ended it. */
export interface Frame {
  text: string;
  end: string;
}

/** What an answer left once its stream ended: the events held from a recall call on, and its whole text. */
export interface PassedAnswer {
  held: Frame[];
  text: string;
}

/** Writes to the client, waiting while its socket is full (or until it went away). */
function write(res: ServerResponse, text: string): Promise<void> | undefined {
  // Nothing to wait for most of the time: no promise for it.
  if (res.destroyed || res.write(text)) return undefined;
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

const parsed = (frame: Frame): Obj | undefined => {
  try {
    const v: unknown = JSON.parse(frameData(frame.text));
    return isObj(v) ? v : undefined;
  } catch {
    return undefined; // [DONE], a comment: not an event of the answer
  }
};

/** The frame with its data replaced by `e`, its other lines (the event name) as they were. */
function rewritten(frame: Frame, e: Obj): Frame {
  const lines = frame.text.split(/\r?\n/).filter((l) => !l.startsWith('data:'));
  return { text: [...lines, `data: ${JSON.stringify(e)}`].join('\n'), end: frame.end };
}

/**
 * The frame as the client gets it: unchanged in the first answer, renumbered after a recall
 * round (undefined: dropped). What it adds is noted in `at`.
 */
export function clientFrame(
  rules: EventRules,
  frame: Frame,
  at: StreamPlace,
  later: boolean,
): Frame | undefined {
  // An event of the first answer goes as it came: it is read only when `passed` notes something in it.
  if (!later && rules.notes?.(frame.text) === false) {
    if (!at.begun) at.begun = frameData(frame.text).startsWith('{');
    return frame;
  }
  const e = parsed(frame);
  if (e === undefined) return frame;
  // Until the client has an event, an answer is the first it reads and goes as it came.
  const out = later ? rules.continued(e, at) : e;
  if (out === undefined) return undefined;
  rules.passed(out, at);
  at.begun = true;
  return out === e ? frame : rewritten(frame, out);
}

/** Writes frames to the client as {@link clientFrame} makes them. */
export async function writeFrames(
  res: ServerResponse,
  protocol: ProtocolName,
  frames: readonly Frame[],
  at: StreamPlace,
  later: boolean,
): Promise<void> {
  const text = clientText(EVENT_RULES[protocol], frames, at, later);
  if (text !== '') await write(res, text);
}

/** The frames as the client gets them, as one text (one write to its socket, not one for each). */
function clientText(rules: EventRules, frames: readonly Frame[], at: StreamPlace, later: boolean): string {
  let text = '';
  for (const f of frames) {
    const out = clientFrame(rules, f, at, later);
    if (out !== undefined) text += out.text + out.end;
  }
  return text;
}

/** Splits text into complete frames and the rest (an event not ended yet). */
function framesOf(text: string): { frames: Frame[]; rest: string } {
  const frames: Frame[] = [];
  const blank = /\r?\n\r?\n/g;
  let from = 0;
  for (let m = blank.exec(text); m !== null; m = blank.exec(text)) {
    frames.push({ text: text.slice(from, m.index), end: m[0] });
    from = m.index + m[0].length;
  }
  return { frames, rest: text.slice(from) };
}

/**
 * Reads one streamed answer through: its events go on to the client (after `open` has written
 * the answer's head) once they show text or another tool's call, until one opens a recall call
 * (unless `hold` is false); from there they are held and handed back, with the events before
 * that said nothing yet. `tap` reads the upstream's bytes as they came (its usage).
 */
export async function passAnswer(
  res: ServerResponse,
  protocol: ProtocolName,
  answer: UpstreamResponse,
  options: { at: StreamPlace; later: boolean; hold: boolean; open: () => void; tap?: UsageTap },
): Promise<PassedAnswer> {
  const rules = EVENT_RULES[protocol];
  const decoder = new StringDecoder('utf8');
  const whole: string[] = [];
  let waitingText = '';
  // Events that said nothing yet wait for one that does; from a recall call on, all wait.
  const waiting: Frame[] = [];
  let said = false;
  let holding = false;
  const pass = (frames: Frame[]) => {
    const text = clientText(rules, frames, options.at, options.later);
    if (text === '') return undefined;
    options.open();
    return write(res, text);
  };
  const take = (frames: Frame[]) => {
    // What may go on of these frames goes in one write.
    const ready: Frame[] = [];
    for (const f of frames) {
      let frame = f;
      if (!holding) {
        const e = said && !f.text.includes('recall') ? undefined : parsed(f);
        const verdict = e === undefined ? undefined : rules.verdict(e);
        holding = verdict === 'recall' && options.hold;
        said ||= verdict !== undefined;
        // What the event brings before the recall call goes on; the call and after it wait.
        const parts = holding && e !== undefined ? rules.split?.(e) : undefined;
        if (parts !== undefined) {
          waiting.push(rewritten(f, parts[0]));
          frame = rewritten(f, parts[1]);
          ready.push(...waiting.splice(0));
        }
      }
      waiting.push(frame);
      if (said && !holding) ready.push(...waiting.splice(0));
    }
    return pass(ready);
  };
  for await (const chunk of answer.body) {
    options.tap?.write(chunk);
    const text = decoder.write(chunk);
    whole.push(text);
    const split = framesOf(waitingText + text);
    waitingText = split.rest;
    const wait = take(split.frames);
    if (wait !== undefined) await wait;
  }
  options.tap?.end();
  const last = waitingText + decoder.end();
  if (last.trim() !== '') await take([{ text: last, end: '' }]);
  // A stream that never said anything (or held nothing) has its events go on as they came.
  if (!holding) await pass(waiting);
  // Only an answer that held events is read back whole (for its recall calls).
  return { held: holding ? waiting : [], text: holding ? whole.join('') : '' };
}
