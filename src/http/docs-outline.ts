/**
 * The reference's first screen as plain HTML, made from a version's document: its title and
 * version, how to authenticate, and every operation under its tag. It is the /docs page for a
 * reader without JavaScript, and what any reader sees while Swagger UI loads (which then takes
 * its place).
 */
import type { Document } from 'openapi-backend';
import { escapeHtml, inlineHtml } from './html';

// A path item's other keys (parameters, summary, servers…) are not operations.
const methods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

interface Operation {
  method: string;
  path: string;
  operationId?: string;
  summary?: string;
  deprecated?: boolean;
  tags?: string[];
}

interface SecurityScheme {
  type: string;
  scheme?: string;
  in?: string;
  name?: string;
  description?: string;
}

/** The name Swagger UI gives the group of operations without a tag. */
const untagged = 'default';

/** Every operation, in the document's order. */
function operationsOf(document: Document): Operation[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries((item ?? {}) as Record<string, Omit<Operation, 'method' | 'path'>>)
      .filter(([key]) => methods.has(key))
      .map(([method, operation]) => ({ ...operation, method, path })),
  );
}

/** The document's tags in its order, then any an operation names without declaring, as Swagger UI groups them. */
function groupsOf(
  document: Document,
): Array<{ name: string; description?: string; operations: Operation[] }> {
  const groups = new Map(
    (document.tags ?? []).map((tag) => [
      tag.name,
      { name: tag.name, description: tag.description, operations: [] as Operation[] },
    ]),
  );
  for (const operation of operationsOf(document)) {
    for (const name of operation.tags?.length ? operation.tags : [untagged]) {
      if (!groups.has(name)) groups.set(name, { name, description: undefined, operations: [] });
      groups.get(name)!.operations.push(operation);
    }
  }
  return [...groups.values()].filter((group) => group.operations.length > 0);
}

function schemeKind({ type, scheme, in: where, name }: SecurityScheme): string {
  if (type === 'http') return `HTTP ${scheme ?? ''} authentication`;
  if (type === 'apiKey') return `an API key in the ${where ?? ''} ${name ?? ''}`;
  return type;
}

const operationRow = (operation: Operation) =>
  `<tr><td>${operation.method.toUpperCase()}</td><td><code>${escapeHtml(operation.path)}</code></td>` +
  `<td>${escapeHtml(operation.summary ?? '')}${operation.deprecated ? ' <em>(deprecated)</em>' : ''}</td>` +
  `<td><code>${escapeHtml(operation.operationId ?? '')}</code></td></tr>`;

/**
 * The outline of `document` (an OpenAPI 3 document) as one `<main>`: headings, paragraphs and a
 * table per tag, everything taken from the document escaped; code spans of its descriptions as
 * `<code>`. `links` name where the document itself is published.
 */
export function docsOutline(
  document: Document,
  links: Array<{ href: string; text: string }> = [],
): string {
  const { info } = document;
  const [lead] = (info.description ?? '').split('\n\n');
  const schemes = Object.entries(
    (document.components?.securitySchemes ?? {}) as Record<string, SecurityScheme>,
  );
  const published = links
    .map((link) => `<a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a>`)
    .join(', ');
  const lines = [
    '<main id="outline">',
    `<h1>${escapeHtml(info.title)}</h1>`,
    `<p>Version <strong>${escapeHtml(info.version)}</strong>${published && `: the document as ${published}`}</p>`,
    lead ? `<p>${inlineHtml(lead)}</p>` : '',
    schemes.length ? '<h2>Authentication</h2>' : '',
    ...schemes.map(
      ([name, scheme]) =>
        `<p><code>${escapeHtml(name)}</code>, ${escapeHtml(schemeKind(scheme))}: ${inlineHtml((scheme.description ?? '').trim())}</p>`,
    ),
    '<h2>Operations</h2>',
    ...groupsOf(document).map((group, i) =>
      [
        `<section aria-labelledby="outline-tag-${i}">`,
        `<h3 id="outline-tag-${i}">${escapeHtml(group.name)}</h3>`,
        group.description ? `<p>${inlineHtml(group.description.trim())}</p>` : '',
        '<table>',
        '<thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Summary</th><th scope="col">operationId</th></tr></thead>',
        '<tbody>',
        ...group.operations.map(operationRow),
        '</tbody>',
        '</table>',
        '</section>',
      ]
        .filter(Boolean)
        .join('\n'),
    ),
    '</main>',
  ];
  return lines.filter(Boolean).join('\n');
}
