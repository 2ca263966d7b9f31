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

/** Reads an answer's bytes as they go by to the client, and hears its usage once it has ended. */
export interface UsageTap {
  write(chunk: Buffer): void;
  end(): void;
}

/**
 * Reads the prompt usage out of an answer as it goes by (the bytes themselves go to the client
 * as they came, not through it): the last usage of an SSE stream, or the usage of a JSON
 * answer. `done` hears it once the answer has ended. Not a stream: no stream's machinery for
 * each request.
 */
export function usageTap(stream: boolean, done: (usage: ReportedUsage | undefined) => void): UsageTap {
  let found: ReportedUsage | undefined;
  let pending = '';
  let size = 0;
  // A character split between two chunks is decoded once both have arrived.
  const decoder = stream ? new StringDecoder('utf8') : undefined;
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
  return {
    write(chunk) {
      if (decoder !== undefined) {
        pending += decoder.write(chunk);
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) readLine(line.trim());
      } else if ((size += chunk.length) <= MAX_JSON_BYTES) json.push(chunk);
    },
    end() {
      if (decoder !== undefined) readLine((pending + decoder.end()).trim());
      else if (size <= MAX_JSON_BYTES)
        try {
          const whole = json.length === 1 ? json[0]! : Buffer.concat(json);
          found = usageIn(JSON.parse(whole.toString('utf8')));
        } catch {
          found = undefined;
        }
      done(found);
    },
  };
}
