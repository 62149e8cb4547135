/**
 * The configuration table (src/config.ts) as people read it: the README's table, and the list
 * `npm start -- --help` prints. A test holds the README's copy to this one.
 */
import { processVariables, testVariables, variables, type Variable } from './config';

const rows = (...tables: Array<Record<string, Variable>>): Variable[] =>
  tables.flatMap((table) => Object.values(table));

const defaultOf = ({ default: value, defaultText }: Variable) =>
  defaultText ?? (typeof value === 'string' && value !== '' ? `\`${value}\`` : 'unset');

const valuesOf = ({ type, bounds }: Variable) => (bounds ? `${type}: ${bounds}` : type);

/** The README's configuration table, in Markdown, every variable the service and its tests read. */
export function configurationTable(): string {
  const lines = rows(variables, processVariables, testVariables).map(
    (row) =>
      `| \`${row.name}\` | ${defaultOf(row)} | ${valuesOf(row)} | ${row.doc}${row.more ? `; ${row.more}` : ''} |`,
  );
  return ['| variable | default | values | meaning |', '|---|---|---|---|', ...lines].join('\n');
}

/** `npm start -- --help`: what the service reads, one line of doc each. */
export function configurationHelp(): string {
  const plain = (text: string) => text.replace(/`/g, '');
  const entries = rows(variables, processVariables).map(
    (row) =>
      `  ${row.name}  (${plain(valuesOf(row))}; default ${plain(defaultOf(row))})\n      ${plain(row.doc)}`,
  );
  return [
    'usage: npm start [-- --help [--markdown]]',
    '',
    'Serves the Task Tracker API. It is configured by these environment variables; a bad value',
    'stops the start with a message naming the variable. --markdown prints them as the README',
    "table (the README's Configuration section).",
    '',
    ...entries,
  ].join('\n');
}
