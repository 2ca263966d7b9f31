import { Transform } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** The prompt tokens an upstream reported for a request, and how many of them were read from its cache. */
export interface ReportedUsage {
  inputTokens: unknown;
  cachedInputTokens?: unknown;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown) => (typeof v === 'number' ? v : 0);

/**
 * The prompt usage in one answer or stream event of any of the three wire shapes: Anthropic's
 * `usage` (input plus cache reads and writes; `message_start` carries it in streams), Chat
 * Completions' `prompt_tokens`, Responses' `input_tokens` (`response.completed` in streams),
 * Gemini's `usageMetadata` (the last chunk of a stream, which may come as one JSON array).
 */
export function usageIn(value: unknown): ReportedUsage | undefined {
  if (Array.isArray(value))
    return value.reduce<ReportedUsage | undefined>((u, v) => usageIn(v) ?? u, undefined);
  if (!isObj(value)) return undefined;
  const gemini = value.usageMetadata;
  if (isObj(gemini) && typeof gemini.promptTokenCount === 'number')
    return { inputTokens: gemini.promptTokenCount, cachedInputTokens: gemini.cachedContentTokenCount };
  const usage = [
    value.usage,
    (value.message as Obj | undefined)?.usage,
    (value.response as Obj | undefined)?.usage,
  ].find(isObj);
  if (usage === undefined) return undefined;
  if (typeof usage.prompt_tokens === 'number')
    return {
      inputTokens: usage.prompt_tokens,
      cachedInputTokens: (usage.prompt_tokens_details as Obj | undefined)?.cached_tokens,
    };
  if (typeof usage.input_tokens !== 'number') return undefined;
  if ('cache_read_input_tokens' in usage || 'cache_creation_input_tokens' in usage)
    return {
      inputTokens:
        usage.input_tokens + num(usage.cache_read_input_tokens) + num(usage.cache_creation_input_tokens),
      cachedInputTokens: usage.cache_read_input_tokens,
    };
  return {
    inputTokens: usage.input_tokens,
    cachedInputTokens: (usage.input_tokens_details as Obj | undefined)?.cached_tokens,
  };
}

// A JSON answer larger than this carries no usage worth keeping it in memory for.
const MAX_JSON_BYTES = 4 * 1024 * 1024;

/**
 * A pass-through stream that reads the prompt usage out of the answer as it goes by (every
 * byte reaches the client unchanged and at once): the last usage of an SSE stream, or the
 * usage of a JSON answer. `done` hears it once the answer has ended.
 */
export function usageTap(stream: boolean, done: (usage: ReportedUsage | undefined) => void): Transform {
  let found: ReportedUsage | undefined;
  let pending = '';
  let size = 0;
  // A character split between two chunks is decoded once both have arrived.
  const decoder = new StringDecoder('utf8');
  const json: Buffer[] = [];
  const readLine = (line: string) => {
    // Only the events that name a usage are read: the others (most of a long answer) are not parsed.
    if (!line.startsWith('data:') || !line.includes('usage')) return;
    try {
      found = usageIn(JSON.parse(line.slice(5))) ?? found;
    } catch {
      // Not JSON ([DONE], a comment): no usage in it.
    }
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (stream) {
        pending += decoder.write(chunk);
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) readLine(line.trim());
      } else if ((size += chunk.length) <= MAX_JSON_BYTES) json.push(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      if (stream) readLine((pending + decoder.end()).trim());
      else if (size <= MAX_JSON_BYTES)
        try {
          found = usageIn(JSON.parse(Buffer.concat(json).toString('utf8')));
        } catch {
          found = undefined;
        }
      done(found);
      callback();
    },
  });
}
