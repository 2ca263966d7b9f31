import { z } from 'zod';
import { JsonSchema, MessageSchema } from '../messages/message.js';

/**
 * Canonical thread events, one JSON object per line of `events.jsonl`. They are
 * append-only: clearing and normalization never rewrite them; only a compaction boundary
 * changes what the live history is, and the full history before it goes to an artifact.
 */

/** Boundary and snapshot names double as file names, so they are restricted. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

const Base = {
  /** 1, 2, 3 … with no gaps: a gap or repeat means a damaged log. */
  seq: z.number().int().positive(),
  /** ISO-8601 time of the write. */
  at: z.string(),
};

export const MessageAppendedSchema = z.object({
  ...Base,
  type: z.literal('message.appended'),
  message: MessageSchema,
});

/** Validates a recorded compaction strategy. */
export const StrategySchema = z.enum(['local', 'nativeStandalone', 'nativeInline']);
/** Validates how a recorded compaction was produced (local pipeline or provider). */
export const CompactionOriginSchema = z.enum(['local', 'provider']) satisfies z.ZodType<CompactionOrigin>;

/** Validates a compaction boundary event of `events.jsonl`. */
export const CompactBoundarySchema = z.object({
  ...Base,
  type: z.literal('thread.compact_boundary'),
  /** Boundary id, also the artifact's file stem. */
  id: z.string().regex(NAME_PATTERN),
  /** Context items before and after (items, not tokens). */
  before: z.number().int().nonnegative(),
  after: z.number().int().nonnegative(),
  mode: CompactionOriginSchema,
  /** Why it ran: manual, auto, recovery, model-switch, targeted … */
  reason: z.string().min(1),
  strategy: StrategySchema,
  /** Artifact path relative to the session directory. */
  artifact: z.string(),
  /** The new live history the compaction produced. */
  history: z.array(MessageSchema),
  /** What the replaced span had to keep and where each item landed (a Local summary's receipt). */
  receipt: JsonSchema.optional(),
});

/** Validates one line of `events.jsonl` (a message or a compaction boundary). */
export const ThreadEventSchema = z.discriminatedUnion('type', [MessageAppendedSchema, CompactBoundarySchema]);

/** A compaction boundary: the new live history and where the replaced one was archived. */
export type CompactBoundary = z.infer<typeof CompactBoundarySchema>;
/** One event of the durable log: a message appended, or a compaction boundary. */
export type ThreadEvent = z.infer<typeof ThreadEventSchema>;
/** How a recorded compaction was produced: by the local pipeline or by the provider. */
export type CompactionOrigin = 'local' | 'provider';

/** The artifact written before each boundary: the full live history it replaced. */
export const ArtifactSchema = z.object({
  version: z.literal(1),
  boundaryId: z.string().regex(NAME_PATTERN),
  createdAt: z.string(),
  messages: z.array(MessageSchema),
});
