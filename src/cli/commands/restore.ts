import { basename } from 'node:path';
import { z } from 'zod';
import type { Command } from '../command.js';
import { UserError } from '../../core/errors.js';
import { singlePositional } from '../positional.js';
import { parseFlags } from '../flags.js';
import { writeOutputFile } from '../../io/output-file.js';
import { checkOutputPath } from '../../io/output-path.js';
import { fsError } from '../../io/fs-errors.js';
import { resolvePath } from '../run-options.js';
import { exportSession, parseExportFormat } from '../../formats/index.js';
import { openSessionRecords } from '../../session/index.js';

const FlagsSchema = z.object({
  at: z.string().min(1, 'expected a boundary id').optional(),
  to: z.string().optional(),
  out: z.string().min(1, 'expected a file path').optional(),
  json: z.boolean().optional(),
});

/** `compactor restore`: recovers the full history from before any compaction. */
export const command: Command = {
  name: 'restore',
  help: `Usage: compactor restore DIR [--at BOUNDARY] [--to FORMAT] [--out FILE] [--config FILE] [--json]

DIR is a session directory written by the session store (events.jsonl, artifacts/).
Without --at, lists the compaction boundaries. With --at, writes the full live history
as it was just before that compaction (from its artifact).

  --at BOUNDARY   boundary id, e.g. compact-000042 (see the listing)
  --to FORMAT     canonical (default) | openai-chat | anthropic | responses
  --out FILE      write there atomically instead of stdout
  --config FILE   config file (default ./compactor.config.json)
  --json          print a JSON report instead of the listing or the messages: without
                  --at {dir, boundaries: [{id, seq, at, before, after, mode, reason,
                  strategy, artifact}]}; with --at {dir, boundary, messages, to, out,
                  bytes, warnings}

A damaged events.jsonl or artifact fails with one line naming the file and line; exit 2.

Examples (the run writes boundary compact-000293):
  compactor run examples/sessions/django__django-16560.traj.json --session-dir .compactor/s1
  compactor restore .compactor/s1
  compactor restore .compactor/s1 --at compact-000293 --out full-history.json`,
  options: {
    at: { type: 'string' },
    to: { type: 'string' },
    out: { type: 'string' },
  },
  async run(args, ctx) {
    const flags = parseFlags('restore', FlagsSchema, args.values);
    const { path: dir, shown: dirArg } = singlePositional('restore', args.positionals, ctx, 'DIR');
    const store = openSessionRecords(dir);
    try {
      const boundaries = store.listBoundaries();
      if (flags.at === undefined) {
        if (flags.json) ctx.stdout.write(`${JSON.stringify({ dir: dirArg, boundaries }, null, 2)}\n`);
        else if (boundaries.length === 0) ctx.stdout.write(`${dirArg}: no compaction boundaries\n`);
        else
          for (const b of boundaries)
            ctx.stdout.write(`${b.id}  ${b.at}  ${b.reason}/${b.strategy}  ${b.before} → ${b.after} items\n`);
        return 0;
      }
      if (!boundaries.some((b) => b.id === flags.at))
        throw new UserError(
          `restore: no compaction boundary '${flags.at}' in ${dirArg}; \`compactor restore ${dirArg}\` lists them`,
        );
      const to = flags.to !== undefined ? parseExportFormat(flags.to) : 'canonical';
      const outPath = flags.out === undefined ? undefined : resolvePath(ctx, flags.out);
      if (outPath !== undefined) checkOutputPath('restore: --out', outPath, { sessionDirs: [dir] });
      const messages = store.restoreAt(flags.at);
      const text = exportSession(messages, to, { id: `${basename(dir)}@${flags.at}` });
      if (outPath !== undefined) {
        try {
          writeOutputFile(outPath, text);
        } catch (e) {
          throw fsError(flags.out!, 'write output', e);
        }
      }
      if (flags.json)
        ctx.stdout.write(
          `${JSON.stringify(
            {
              dir: dirArg,
              boundary: flags.at,
              messages: messages.length,
              to,
              out: flags.out ?? null,
              bytes: Buffer.byteLength(text),
              warnings: store.warnings().map((w) => `${w.file}:${w.line}: ${w.message}`),
            },
            null,
            2,
          )}\n`,
        );
      else if (flags.out !== undefined)
        ctx.stdout.write(`${dirArg}@${flags.at}: ${messages.length} messages → ${flags.out} (${to})\n`);
      else ctx.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
      return 0;
    } finally {
      store.close();
    }
  },
};
