/**
 * The metric names a PromQL expression reads (as Grafana panels and Prometheus rules write them),
 * found by a small tokenizer: strings, numbers and durations are tokens of their own, so nothing in
 * them is taken for a name; a name before `(` is a function, aggregations and operators are
 * keywords; names in `{…}` are labels (but `__name__="x"` names x); the list after `by`, `without`,
 * `on`, `ignoring`, `group_left` and `group_right` holds labels; ranges and Grafana's variables
 * (`$__rate_interval`, `${datasource}`) are skipped. An unclosed bracket or string throws, so a
 * broken expression fails a test instead of hiding a name.
 */
type Token = { kind: 'name' | 'string' | 'number' | 'variable' | 'punct'; text: string };

// Space and comments (no group: dropped), then one group a kind of token.
const tokenPattern = new RegExp(
  [
    String.raw`\s+|#[^\n]*`,
    String.raw`(?<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\x60[^\x60]*\x60)`, // \x60: a backquote
    String.raw`(?<variable>\$\{[^}]*\}|\$\w+|\[\[\w+\]\])`,
    String.raw`(?<number>(?:\d|\.\d)[\w.]*)`,
    String.raw`(?<name>[a-zA-Z_:][\w:]*)`,
    String.raw`(?<punct>[(){}[\],]|=~|!~|!=|==|<=|>=|[-+*/%^=<>@:])`,
  ].join('|'),
  'y',
);

function tokenize(expr: string): Token[] {
  const tokens: Token[] = [];
  tokenPattern.lastIndex = 0;
  while (tokenPattern.lastIndex < expr.length) {
    const at = tokenPattern.lastIndex;
    const match = tokenPattern.exec(expr);
    if (!match) throw new Error(`PromQL: cannot read ${JSON.stringify(expr.slice(at))}`);
    const kind = Object.entries(match.groups!).find(([, text]) => text !== undefined)?.[0];
    if (kind) tokens.push({ kind: kind as Token['kind'], text: match[0] });
  }
  return tokens;
}

const aggregations =
  'sum min max avg group stddev stdvar count count_values bottomk topk quantile limitk limit_ratio';
const operators = 'and or unless atan2 bool offset inf nan';
// The keywords whose parenthesised list holds labels.
const labelLists = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const keywords = new Set([...`${aggregations} ${operators}`.split(' '), ...labelLists]);
const closing: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
const closers = new Set(Object.values(closing));

export function metricNamesIn(expr: string): string[] {
  const tokens = tokenize(expr);
  const names: string[] = [];
  const open: string[] = [];
  // The index of the token closing the bracket opened at `from`.
  const closes = (from: number): number => {
    let depth = 0;
    for (let i = from; i < tokens.length; i++) {
      if (tokens[i].kind !== 'punct') continue;
      if (closing[tokens[i].text]) depth++;
      else if (closers.has(tokens[i].text) && --depth === 0) return i;
    }
    throw new Error(`PromQL: ${tokens[from].text} not closed in ${JSON.stringify(expr)}`);
  };
  for (let i = 0; i < tokens.length; i++) {
    const { kind, text } = tokens[i];
    const next = tokens[i + 1]?.text;
    if (
      kind === 'punct' &&
      (text === '[' || (text === '(' && labelLists.has(tokens[i - 1]?.text.toLowerCase())))
    ) {
      i = closes(i); // a range or subquery, or a list of labels
    } else if (kind === 'punct' && closing[text]) {
      open.push(closing[text]);
    } else if (kind === 'punct' && closers.has(text)) {
      if (open.pop() !== text)
        throw new Error(`PromQL: ${text} closes nothing in ${JSON.stringify(expr)}`);
    } else if (kind === 'name' && open.at(-1) === '}') {
      // A label matcher: only __name__ names a metric.
      const value = tokens[i + 2];
      if (text === '__name__' && next === '=' && value?.kind === 'string')
        names.push(value.text.slice(1, -1));
      i += 2;
    } else if (kind === 'name' && next !== '(' && !keywords.has(text.toLowerCase())) {
      names.push(text);
    }
  }
  if (open.length > 0) throw new Error(`PromQL: ${open.at(-1)} missing in ${JSON.stringify(expr)}`);
  return names;
}
