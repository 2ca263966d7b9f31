import type { ContentPart, Json } from '../../messages/message.js';
import { sameJson } from '../shared/json-value.js';

/** A media part as a canonical reference: counted as one media item, its bytes kept elsewhere. */
export function mediaRef(mediaType: unknown, url?: string, filename?: unknown): ContentPart {
  const mimeType = typeof mediaType === 'string' ? mediaType : undefined;
  const image = mimeType?.startsWith('image/') === true;
  const part: ContentPart = image ? { type: 'image' } : { type: 'file' };
  if (mimeType !== undefined) part.mimeType = mimeType;
  if (url !== undefined) part.url = url;
  if (!image && typeof filename === 'string') (part as { filename?: string }).filename = filename;
  return part;
}

/** The URL of a part's data when it is one (a `URL`, an http(s)/data string or a tagged url). */
export function urlOf(data: unknown): string | undefined {
  if (data instanceof URL) return data.href;
  if (typeof data === 'string' && /^(https?:|data:)/.test(data)) return data;
  if (typeof data === 'object' && data !== null && (data as { type?: unknown }).type === 'url') {
    const url = (data as { url?: unknown }).url;
    return url instanceof URL ? url.href : typeof url === 'string' ? url : undefined;
  }
  return undefined;
}

type Output = { type: string; value?: unknown; reason?: unknown };

/**
 * What a tool result says, as canonical content: the text the model reads (JSON outputs
 * stringified, a denial as its reason), media as references. Clearing works on this.
 */
export function outputContent(output: unknown): string | ContentPart[] {
  const o = (output ?? {}) as Output;
  switch (o.type) {
    case 'text':
    case 'error-text':
      return typeof o.value === 'string' ? o.value : '';
    case 'json':
    case 'error-json':
      return JSON.stringify(o.value ?? null);
    case 'execution-denied':
      return typeof o.reason === 'string' ? o.reason : 'Tool execution denied.';
    case 'content':
      return Array.isArray(o.value)
        ? o.value.map(
            (p: { type?: string; text?: unknown; mediaType?: unknown; data?: unknown; url?: unknown }) =>
              p.type === 'text'
                ? { type: 'text' as const, text: typeof p.text === 'string' ? p.text : '' }
                : mediaRef(
                    p.mediaType ?? (p.type?.startsWith('image') ? 'image/*' : undefined),
                    urlOf(p.url ?? p.data),
                  ),
          )
        : [];
    default:
      return JSON.stringify(output ?? null);
  }
}

/** A tool result's output after projection: the original when untouched, else the new text. */
export function restoreOutput(original: unknown, content: string | ContentPart[]): Json | unknown {
  if (original !== undefined && sameJson(outputContent(original), content)) return original;
  const text =
    typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? p.text : '')).join('');
  const wasError =
    typeof (original as Output | undefined)?.type === 'string' &&
    (original as Output).type.startsWith('error');
  return { type: wasError ? 'error-text' : 'text', value: text };
}
