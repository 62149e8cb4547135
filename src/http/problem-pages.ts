/**
 * GET /problems/{kind}: each problem `type` URI resolves to a short page describing that problem
 * (RFC 9457 asks that a type URI point at documentation). The pages are made once, from the
 * document's table of problem types, so they say what the contract says.
 */
import type { ContractDocument } from './document';
import type { ProblemKind } from '../errors';
import { escapeHtml, inlineHtml } from './html';
import { problemKinds, problemTitle } from './problems';

export interface ProblemRow {
  kind: string;
  status: number;
  when: string;
}

/** The rows of the table in the Problem schema's description: `| \`/problems/x\` | 404 | when |`. */
export function documentedProblems(document: ContractDocument): ProblemRow[] {
  const schemas = (document.definition.components?.schemas ?? {}) as Record<
    string,
    { description?: string }
  >;
  const rows: ProblemRow[] = [];
  for (const line of (schemas.Problem?.description ?? '').split('\n')) {
    const row = /^\|\s*`\/problems\/([a-z-]+)`\s*\|\s*(\d{3})\s*\|\s*(.+?)\s*\|$/.exec(line.trim());
    if (row) rows.push({ kind: row[1], status: Number(row[2]), when: row[3] });
  }
  return rows;
}

function page(row: ProblemRow, title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${escapeHtml(title)} (${row.status}) — Task Tracker API</title>
</head>
<body>
  <h1>${escapeHtml(title)}</h1>
  <p>Problem type <code>/problems/${row.kind}</code>, HTTP status ${row.status}.</p>
  <p>Answered when ${inlineHtml(row.when)}.</p>
  <p>The answer is an RFC 9457 problem document (<code>application/problem+json</code>): its <code>detail</code> says what was wrong with this request, and <code>request_id</code> names it in the service's log.</p>
  <p>See the <a href="/docs">API reference</a> and the contract, <a href="/openapi.yaml">openapi.yaml</a>.</p>
</body>
</html>
`;
}

/** The page of each problem kind the service answers with, by kind. */
export function problemPages(document: ContractDocument): Map<string, string> {
  const known = new Set<string>(problemKinds);
  const pages = new Map<string, string>();
  for (const row of documentedProblems(document)) {
    if (known.has(row.kind)) pages.set(row.kind, page(row, problemTitle(row.kind as ProblemKind)));
  }
  return pages;
}
