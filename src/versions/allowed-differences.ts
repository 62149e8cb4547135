/**
 * The allow-list of the gate (src/versions/allowed-differences.yaml): each difference between a
 * version's made document and its released one that is meant, named one by one with its reason.
 */
import YAML from 'yaml';
import type { DifferenceKind } from './document-diff';

export const allowListFile = 'src/versions/allowed-differences.yaml';

export interface AllowedDifference {
  version: string;
  /** A JSON pointer into the documents as written (`$ref`s not followed), as the gate names it. */
  pointer: string;
  kind: DifferenceKind;
  reason: string;
}

const kinds: readonly string[] = ['added', 'removed', 'changed'];
const fields = ['version', 'pointer', 'kind', 'reason'];

/** What is wrong with one entry, if anything. */
function entryProblem(entry: unknown): string | undefined {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return 'not a mapping';
  const record = entry as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => !fields.includes(key));
  if (unknown.length > 0) return `unknown field(s) ${unknown.join(', ')}`;
  const missing = fields.filter((key) => typeof record[key] !== 'string' || record[key] === '');
  if (missing.length > 0) return `${missing.join(', ')} missing or not a string`;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(record.version as string)) return 'version is not YYYY-MM-DD';
  if (!(record.pointer as string).startsWith('/')) return 'pointer does not start with /';
  if (!kinds.includes(record.kind as string)) return `kind is not one of ${kinds.join(', ')}`;
  return undefined;
}

/** The entries of the allow-list's text; an error naming every malformed or repeated entry. */
export function parseAllowList(text: string): AllowedDifference[] {
  const parsed = (YAML.parse(text) ?? {}) as { differences?: unknown };
  const entries = parsed.differences ?? [];
  if (!Array.isArray(entries)) throw new Error(`${allowListFile}: differences is not a list`);
  const problems: string[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    const problem = entryProblem(entry);
    if (problem !== undefined) return problems.push(`entry ${index + 1}: ${problem}`);
    const { version, pointer, kind } = entry as AllowedDifference;
    const key = `${version} ${kind} ${pointer}`;
    if (seen.has(key)) problems.push(`entry ${index + 1}: ${key} is listed twice`);
    seen.add(key);
  });
  if (problems.length > 0) throw new Error(`${allowListFile}:\n  ${problems.join('\n  ')}`);
  return entries as AllowedDifference[];
}
