// Preload for benchmark children (`node --import ./child-usage.mjs …`): at exit, writes the
// process's peak RSS and CPU time to the file named by COMPACTOR_BENCH_USAGE, so the parent
// reads the child's own figures (tsx is not loaded into the measured process).
import { writeFileSync } from 'node:fs';
import process from 'node:process';

const out = process.env.COMPACTOR_BENCH_USAGE;
if (out)
  process.on('exit', () => {
    const u = process.resourceUsage();
    writeFileSync(out, JSON.stringify({ maxRssKb: u.maxRSS, userUs: u.userCPUTime, systemUs: u.systemCPUTime }));
  });
