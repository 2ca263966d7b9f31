/**
 * Just enough shell reading for the offline summarizer: which files a command line reads
 * or modifies, and whether it is a check (test, lint, build, type check). Heuristic by
 * design; it never executes anything.
 */

/** Files a command touches. */
export interface ShellFiles {
  read: string[];
  modified: string[];
}

/** Splits one line into words, honouring simple quotes; operators become their own words. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let cur = '';
  let quote: string | null = null;
  let has = false;
  const flush = () => {
    if (has) words.push(cur);
    cur = '';
    has = false;
  };
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === quote) quote = null;
      else cur += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      has = true;
    } else if (/\s/.test(ch)) flush();
    else if (ch === ';' || ch === '|' || ch === '&' || ch === '>' || ch === '<') {
      flush();
      let op = ch;
      while (i + 1 < line.length && '|&><'.includes(line[i + 1]) && op.length < 3) op += line[++i];
      words.push(op);
    } else {
      cur += ch;
      has = true;
    }
  }
  flush();
  return words;
}

/** The command lines of a script, without heredoc bodies (their content is data). */
export function commandLines(script: string): string[] {
  const out: string[] = [];
  const lines = script.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    out.push(line);
    const heredoc = /<<-?\s*['"]?([A-Za-z_][\w]*)['"]?/.exec(line);
    if (heredoc) {
      const end = heredoc[1];
      while (i + 1 < lines.length && lines[i + 1].trim() !== end) i++;
      i++;
    }
  }
  return out;
}

const READERS = new Set(['cat', 'nl', 'head', 'tail', 'less', 'more', 'bat', 'open', 'view', 'xxd']);
const OPERATORS = new Set(['&&', '||', ';', '|', '&', ';;']);

// A word that plausibly names a file: has a dot or a slash, and no shell metacharacters.
function looksLikePath(w: string): boolean {
  return (
    w.length > 0 &&
    w.length < 260 &&
    !w.startsWith('-') &&
    !/[*?$`(){}[\]=]/.test(w) &&
    /[./]/.test(w) &&
    !/^\d+(\.\d+)*$/.test(w) &&
    !/^[a-z]+:\/\//i.test(w)
  );
}

function pathsOf(words: string[]): string[] {
  return words.filter(looksLikePath).filter((w) => w !== '/dev/null' && w !== '.' && w !== '..');
}

/** The file operands of a sed command: every non-option word after the script (unless -e/-f gave it). */
function sedFiles(args: readonly string[]): string[] {
  const scriptGiven = args.some((w) => /^-[a-zA-Z]*[ef]$/.test(w) || /^--(?:expression|file)\b/.test(w));
  const operands = args.filter((w, i) => !w.startsWith('-') && !/^-[a-zA-Z]*[ef]$/.test(args[i - 1] ?? ''));
  return scriptGiven ? operands : operands.slice(1);
}

/**
 * Files a shell script reads (cat/nl/head/tail/sed -n/open …) and modifies (sed -i,
 * redirections, tee, touch, rm, mv, cp, create). `currentFile` is the file an editor-style
 * `edit` command applies to (SWE-agent's open file).
 */
export function shellFiles(script: string, currentFile?: string): ShellFiles & { open?: string } {
  const read: string[] = [];
  const modified: string[] = [];
  let open: string | undefined;
  for (const line of commandLines(script)) {
    const words = shellWords(line);
    let seg: string[] = [];
    const segments: string[][] = [];
    for (const w of words) {
      if (OPERATORS.has(w)) {
        segments.push(seg);
        seg = [];
      } else seg.push(w);
    }
    segments.push(seg);
    for (const s of segments) {
      for (let i = 0; i < s.length - 1; i++)
        if ((s[i] === '>' || s[i] === '>>') && looksLikePath(s[i + 1]) && s[i + 1] !== '/dev/null')
          modified.push(s[i + 1]);
      const args = s.filter(
        (w, i) => !(w === '>' || w === '>>' || w === '<' || s[i - 1] === '>' || s[i - 1] === '>>'),
      );
      const cmd = (args[0] ?? '').replace(/^.*\//, '');
      const rest = args.slice(1);
      if (cmd === 'sed') {
        const files = pathsOf(sedFiles(rest));
        if (rest.some((w) => /^-[a-zA-Z]*i/.test(w) || w === '--in-place')) modified.push(...files);
        else read.push(...files);
      } else if (READERS.has(cmd)) {
        const files = pathsOf(rest);
        read.push(...files);
        if (cmd === 'open' && files[0]) open = files[0];
      } else if (cmd === 'tee' || cmd === 'touch' || cmd === 'rm' || cmd === 'create')
        modified.push(...pathsOf(rest));
      else if (cmd === 'mv' || cmd === 'cp') {
        const files = pathsOf(rest);
        if (cmd === 'mv') modified.push(...files);
        else if (files.length > 1) modified.push(files[files.length - 1]);
      } else if (cmd === 'edit' && currentFile) modified.push(currentFile);
    }
  }
  return { read: unique(read), modified: unique(modified), ...(open ? { open } : {}) };
}

const CHECK =
  /(?:^|[\s;&|(/])(?:pytest|py\.test|tox|nox|jest|vitest|mocha|ava|tsc|eslint|prettier\s+--check|ruff|mypy|pyright|flake8|pylint|black\s+--check|rspec|phpunit|ctest|gradle\w*|mvn|runtests\.py|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:test|lint|build|typecheck|check)\b|cargo\s+(?:test|check|build|clippy)|go\s+(?:test|vet|build)|dotnet\s+test|make(?:\s|$)|manage\.py\s+test|python[\d.]*\s+-m\s+(?:pytest|unittest)|python[\d.]*\s+\S*(?:test|reproduce|repro)\S*\.py)(?=$|[\s;&|)])/i;

/** True when a command is a check: tests, lint, type check or build. */
export function isCheckCommand(command: string): boolean {
  return CHECK.test(command);
}

const EXPLORATION =
  /^\s*(?:cd\s+\S+\s*&&\s*)?(?:cat|head|tail|less|more|grep|egrep|rg|ag|find|ls|tree|nl|wc|sed\s+-n|git\s+(?:status|log|diff|show|grep))\b/;

/** True for a one-line command that only looks at files (reads, listings, searches), writing nothing. */
export function isExplorationCommand(command: string): boolean {
  return !command.includes('\n') && EXPLORATION.test(command) && !/>|\s-i\b|--in-place/.test(command);
}

/** Order-preserving de-duplication. */
export function unique<T>(items: Iterable<T>): T[] {
  return [...new Set(items)];
}
