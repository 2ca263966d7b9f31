import { msg, type Message } from '#src/messages/message.js';

/** A user turn with `batches` tool batches of `width` parallel calls, each output `size` chars. */
export function turn(tag: string, batches: number, width: number, size: number): Message[] {
  const out: Message[] = [msg.user(`task ${tag}: please look at things`)];
  for (let b = 0; b < batches; b++) {
    const calls = Array.from({ length: width }, (_, w) => ({
      id: `${tag}-${b}-${w}`,
      name: 'bash',
      arguments: JSON.stringify({ command: `cat file_${tag}_${b}_${w}.py` }),
    }));
    out.push(msg.assistant(`step ${b}`, calls));
    for (const c of calls) out.push(msg.tool(c.id, `output ${c.id} `.repeat(Math.ceil(size / 12)), 'bash'));
  }
  out.push(msg.assistant(`done with ${tag}`));
  return out;
}

/** A session of `turns` user turns. */
export function session(turns: number, batches = 2, width = 2, size = 200): Message[] {
  const h: Message[] = [msg.system('You are an agent.')];
  for (let t = 0; t < turns; t++) h.push(...turn(`t${t}`, batches, width, size));
  return h;
}
