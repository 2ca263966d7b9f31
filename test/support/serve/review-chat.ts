/** A review conversation (Chat Completions body) after `turns` answered turns. */
export function reviewChat(topic: string, turns: number) {
  const messages: Array<{ role: string; content: string }> = [
    { role: 'system', content: 'You review code.' },
    { role: 'user', content: `Review the ${topic} module.` },
  ];
  for (let i = 0; i < turns; i++)
    messages.push(
      { role: 'assistant', content: `Notes ${i} on the ${topic} module.` },
      { role: 'user', content: `Go on with part ${i + 2} of ${topic}.` },
    );
  return { model: 'gpt-4o', messages };
}
