import { inputError, placeOf } from './input-error.js';
import { reusingParses, type JsonDocument } from './json-text.js';
import { readSessionText } from './read-file.js';
import { readJsonDocumentInPieces } from './json-pieces.js';
import { detectFormat, formatNamed, fromJsonDocument, parseFormatName, type FormatName } from './registry.js';
import { fillToolNames } from './tool-names.js';
import type { ImportResult } from './types.js';

/**
 * Parses session text in the given or detected format. Every error is a
 * one-line UserError naming the file, line or entry, and field. Tool results get
 * the name of the call they answer when the format does not record it.
 */
export function parseSession(
  text: string,
  opts: { from?: FormatName; fileName?: string } = {},
): ImportResult {
  if (text.includes('\u0000'))
    throw inputError(placeOf(opts.fileName), 'binary data (NUL byte), expected a text session file');
  // `from` may come straight from a flag or a caller's config, so it is checked too.
  const from = opts.from;
  // Detection and the importer parse the same text; the second parse reuses the first.
  const result = reusingParses(() => {
    const format = from !== undefined ? parseFormatName(from) : detectFormat(text, opts.fileName);
    return formatNamed(format).import(text, opts.fileName);
  });
  return withToolNames(result);
}

/** Names tool results after the call they answer where the format does not record it. */
function withToolNames(result: ImportResult): ImportResult {
  for (const s of result.sessions) s.messages = fillToolNames(s.messages);
  return result;
}

/**
 * Reads and parses a session file (size, binary and UTF-8 checks first; see
 * {@link readSessionText}). `displayName` is how errors and the result name the file
 * (default: `path`), e.g. the path as the user typed it. A large JSON document is read in
 * pieces, never holding its whole text (see readJsonDocumentInPieces; `piecesFrom` lowers the
 * size from which it is, for tests); anything else is read whole.
 */
export function readSessionFile(
  path: string,
  opts: { from?: FormatName; displayName?: string; piecesFrom?: number } = {},
): ImportResult {
  const name = opts.displayName ?? path;
  const doc = readJsonDocumentInPieces(path, name, opts.piecesFrom);
  const imported = doc && importDocument(doc, opts.from, name);
  if (imported) return imported;
  return parseSession(readSessionText(path, undefined, name), { from: opts.from, fileName: name });
}

/**
 * Imports a document read in pieces when detection would pick a document importer for it (and
 * `from`, when given, names that format); undefined sends the file down the usual path.
 */
function importDocument(
  doc: JsonDocument,
  from: string | undefined,
  fileName: string,
): ImportResult | undefined {
  const format = fromJsonDocument(doc.value);
  const importer = format === undefined ? undefined : formatNamed(format).importDocument;
  if (!importer || (from !== undefined && from !== format)) return undefined;
  return withToolNames(importer(doc, fileName));
}
