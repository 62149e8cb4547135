/**
 * `upgrade-report --to VERSION FILE...`: for each exchange of pacts (V2, V3, V4) or HAR files,
 * the changes between its API version (its `Api-Version` header, else 2026-11-28 or
 * `--api-version`'s) and the target that touch it, with its request as the target would take it
 * and its answer as the target gives it (brought down exactly when the target is older; the
 * target document's example of that answer when it is newer, since an answer cannot be made up).
 */
import fs from 'node:fs';
import { OpenAPIBackend, type Document, type Operation } from 'openapi-backend';
import type { Json, JsonObject, VersionedRequest } from '../versions/change';
import { exampleAnswer, stepsBetween, touches } from '../versions/upgrade';
import { versions } from '../versions/versions';
import { defaultInteractionVersion, interactionVersion } from './interaction-versions';
import { PactFileError } from './pact-files';

/** One exchange of a file, as the report needs it. */
interface Exchange {
  file: string;
  description: string;
  method: string;
  path: string;
  query: Record<string, string[]>;
  headers: Record<string, unknown>;
  body: Json | undefined;
  status?: number;
  answer?: Json;
}

export interface ExchangeReport {
  file: string;
  description: string;
  method: string;
  path: string;
  operationId: string | null;
  from: string;
  to: string;
  touched: { version: string; change: string }[];
  /** As the target takes the request: its query and body. */
  request: { query: Record<string, string[]>; body: Json | undefined };
  /** The answer in the target, and whether it is the target document's example rather than this exchange's. */
  answer?: { status: number; body: Json | undefined; fromDocumentExample: boolean };
}

const parseJson = (text: unknown): Json | undefined => {
  if (typeof text !== 'string' || text === '') return undefined;
  try {
    return JSON.parse(text) as Json;
  } catch {
    return text;
  }
};

function queryOf(query: unknown): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  if (typeof query === 'string')
    for (const [name, value] of new URLSearchParams(query)) (found[name] ??= []).push(value);
  else if (query && typeof query === 'object')
    for (const [name, value] of Object.entries(query))
      found[name] = (Array.isArray(value) ? value : [value]).map(String);
  return found;
}

/** A pact's HTTP interactions or a HAR file's entries; a file that is neither is an error naming it. */
function exchangesOf(file: string): Exchange[] {
  let json: {
    interactions?: unknown[];
    log?: { entries?: unknown[] };
  };
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new PactFileError(`${file}: cannot be read as JSON (${(error as Error).message})`);
  }
  if (Array.isArray(json?.log?.entries))
    return json.log.entries.map((entry, i) => {
      const { request, response } = entry as {
        request: {
          method: string;
          url: string;
          headers?: { name: string; value: string }[];
          postData?: { text?: string };
        };
        response?: { status?: number; content?: { text?: string } };
      };
      const url = new URL(request.url);
      return {
        file,
        description: `entry ${i + 1}`,
        method: request.method.toUpperCase(),
        path: url.pathname,
        query: queryOf(url.search.slice(1)),
        headers: Object.fromEntries((request.headers ?? []).map((h) => [h.name, h.value])),
        body: parseJson(request.postData?.text),
        status: response?.status,
        answer: parseJson(response?.content?.text),
      };
    });
  if (Array.isArray(json?.interactions))
    return json.interactions
      .filter((interaction) => (interaction as { request?: unknown }).request !== undefined)
      .map((interaction) => {
        const { description, request, response } = interaction as {
          description?: string;
          request: {
            method: string;
            path: string;
            query?: unknown;
            headers?: Record<string, unknown>;
            body?: unknown;
          };
          response?: { status?: number; body?: unknown };
        };
        const body = (request.body as { content?: unknown } | undefined) ?? undefined;
        return {
          file,
          description: description ?? '(no description)',
          method: request.method.toUpperCase(),
          path: request.path,
          query: queryOf(request.query),
          headers: request.headers ?? {},
          // Pact V4 wraps bodies as { content, contentType, encoded }.
          body: (body && typeof body === 'object' && 'content' in body ? body.content : body) as
            Json | undefined,
          status: response?.status,
          answer:
            (response?.body as { content?: Json } | undefined)?.content ??
            (response?.body as Json | undefined),
        };
      });
  throw new PactFileError(
    `${file}: is neither a pact with interactions nor a HAR file (log.entries)`,
  );
}

export async function upgradeReport(
  files: string[],
  to: string,
  newestDocument: JsonObject,
  fallbackVersion: string = defaultInteractionVersion,
): Promise<ExchangeReport[]> {
  const router = new OpenAPIBackend({
    definition: newestDocument as unknown as Document,
    quick: true,
    validate: false,
  });
  await router.init();
  const index = (version: string) => versions.findIndex((entry) => entry.version === version);
  return files.flatMap(exchangesOf).map((exchange) => {
    const from = interactionVersion({ request: { headers: exchange.headers } }, fallbackVersion);
    const matched = router.router.matchOperation({
      method: exchange.method.toLowerCase(),
      path: exchange.path,
      headers: {},
    }) as Operation | undefined;
    const operationId = matched?.operationId ?? null;
    const request: VersionedRequest = {
      operationId: operationId ?? '',
      query: exchange.query,
      body: exchange.body,
    };
    const steps =
      operationId === null || index(from) < 0 ? [] : stepsBetween(from, to, newestDocument);
    const touched = steps.filter((step) => touches(step, request, exchange.status));
    const upgrading = index(to) < index(from);
    let moved = request;
    if (upgrading)
      for (const step of steps) moved = step.change.request?.(structuredClone(moved)) ?? moved;
    const answer =
      exchange.status === undefined || operationId === null || touched.length === 0
        ? undefined
        : upgrading
          ? {
              status: exchange.status,
              body: exampleAnswer(touched[touched.length - 1].newer, operationId, exchange.status),
              fromDocumentExample: true,
            }
          : {
              status: exchange.status,
              body: [...steps]
                .reverse()
                .reduce(
                  (down, step) => step.change.answer?.(down) ?? down,
                  structuredClone({ operationId, status: exchange.status, body: exchange.answer }),
                ).body,
              fromDocumentExample: false,
            };
    return {
      file: exchange.file,
      description: exchange.description,
      method: exchange.method,
      path: exchange.path,
      operationId,
      from,
      to,
      touched: touched.map((step) => ({ version: step.version, change: step.change.sentence })),
      request: { query: moved.query, body: moved.body },
      answer,
    };
  });
}

/** For a person: each exchange, touched or not, and what touches it. */
export function upgradeText(reports: ExchangeReport[]): string {
  return reports
    .map((report) => {
      const head = `"${report.description}" (${report.method} ${report.path}, ${report.from} → ${report.to}, ${report.file})`;
      if (report.operationId === null) return `${head}: no operation of the API; nothing to say`;
      if (report.touched.length === 0) return `${head}: not touched`;
      const lines = [`${head}: touched by`];
      for (const { version, change } of report.touched) lines.push(`  - ${version}: ${change}`);
      const query = new URLSearchParams(
        Object.entries(report.request.query).flatMap(([k, vs]) =>
          vs.map((v) => [k, v] as [string, string]),
        ),
      ).toString();
      lines.push(
        `  the request in ${report.to}: ${report.method} ${report.path}${query ? `?${query}` : ''}${report.request.body === undefined ? '' : ` ${JSON.stringify(report.request.body)}`}`,
      );
      if (report.answer)
        lines.push(
          `  the answer in ${report.to}${report.answer.fromDocumentExample ? " (the document's example)" : ''}: ${report.answer.status} ${JSON.stringify(report.answer.body)}`,
        );
      return lines.join('\n');
    })
    .join('\n');
}
