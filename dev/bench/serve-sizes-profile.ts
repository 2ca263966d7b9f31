import { cpuBySize, PROTOCOLS, startSizeProxies, type Wire } from './serve-sizes.js';

/*
 * CPU a `compactor serve` process spends per request, by protocol and history size, against the
 * parse floor of the same bodies (see serve-sizes.ts):
 * `npx tsx dev/bench/serve-sizes-profile.ts [PROFILE_DIR|''] [turns] [protocols,...|''] [sizes,...|''] [OTHER_CHECKOUT]`.
 * With a PROFILE_DIR the proxy writes its CPU profile there (open it in Chrome's DevTools); with
 * another checkout, its proxy gets the same bodies in the same run, request for request (a before and after).
 */

const [dir = '', turnsArg = '8', protocolsArg = '', sizesArg = '', other] = process.argv.slice(2);
const WIRES: Wire[] = protocolsArg === '' ? PROTOCOLS : (protocolsArg.split(',') as Wire[]);
const SIZES = sizesArg === '' ? [10_000, 50_000, 100_000, 200_000] : sizesArg.split(',').map(Number);

const started = await startSizeProxies(
  other === undefined ? [''] : ['', `${other}/`],
  dir === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`],
);
try {
  console.log('proxy  protocol          tokens   cpu ms/req   floor ms   added/floor');
  await cpuBySize(started, WIRES, SIZES, Number(turnsArg), (r) =>
    console.log(
      r.proxy.padEnd(6),
      r.wire.padEnd(17),
      String(r.tokens).padStart(6),
      r.cpu.toFixed(1).padStart(12),
      r.floor.toFixed(1).padStart(10),
      (r.cpu / r.floor).toFixed(2).padStart(12),
    ),
  );
} finally {
  await started.close();
}
