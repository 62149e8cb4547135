/**
 * Requests and answers of the versions older than the newest (issue 45). The handlers work in
 * the newest version only: a request of an older version is validated against that version's own
 * document, then brought up to the newest (src/versions' migrations), and its answer brought down
 * and written by that version's schemas. A request in the newest version does none of this.
 */
import type { Document, OpenAPIBackend, ParsedRequest, Request } from 'openapi-backend';
import type { Json } from '../versions/change';
import { documentFileOf } from '../versions/documents';
import { answerDown, requestUp } from '../versions/migrate';
import { versions, type SupportedVersion } from '../versions/versions';
import { parsedDocument } from './document';
import type { HttpReply } from './http-reply';
import { responseBodies, type WriteBody } from './response-bodies';
import { installRouter, type Routes } from './shims/routing';
import { invalidRequest, validatingBackend, validInVersion } from './request-validation';
import { notRouted } from './routing-problems';

/** The supported versions and the documents of those older than the newest, by version. */
export interface VersionSet {
  registry: readonly SupportedVersion[];
  documents: ReadonlyMap<string, Document>;
}

/** The service's own: every older version's document as made under openapi/versions/. */
export function madeVersionSet(): VersionSet {
  const documents = new Map<string, Document>();
  // Parsed at build time, as the newest version's is: parsing their YAML was a sixth of a start.
  for (const { version } of versions.slice(1))
    documents.set(version, parsedDocument(documentFileOf(version)));
  return { registry: versions, documents };
}

export interface OlderVersions {
  /** Whether the version is older than the newest: only then is there anything to do. */
  isOlder(version: string | undefined): version is string;
  /**
   * Refuses a request for an operation a newer version added, as the older version's document
   * routes it: 405 with its `Allow` where that version has the path with other methods (`POST
   * /v1/tasks/search` is `/v1/tasks/{task_id}` there), else 404.
   */
  refuseAdded(version: string, operationId: string, request: Request): void;
  /**
   * Validates the request (as sent) against its version's document, then brings it up in place:
   * the request as sent and its parse, either of which the newest version's validation reads.
   */
  bringUp(version: string, operationId: string, sent: Request, parsed: ParsedRequest): void;
  /** The newest version's answer as the older version gives it. */
  bringDown(version: string, operationId: string, reply: HttpReply): HttpReply;
  /** Writes a body by the older version's schemas. */
  writeBody(version: string): WriteBody;
}

export async function olderVersions(
  set: VersionSet,
  /** Whether the newest version's document takes the request as sent: the refusal then says so. */
  newestTakes: (sent: Request, operationId: string) => boolean = () => false,
): Promise<OlderVersions> {
  const byVersion = new Map<
    string,
    { api: OpenAPIBackend; routes: Routes; writeBody: WriteBody }
  >();
  for (const [version, definition] of set.documents) {
    const api = await validatingBackend(definition);
    // The newest version's router: openapi-backend's own lists every operation again at each lookup.
    const routes = installRouter(api);
    const problem = (api.definition.components!.schemas as Record<string, Record<string, unknown>>)
      .Problem;
    byVersion.set(version, {
      api,
      routes,
      writeBody: responseBodies(api.getOperations(), problem),
    });
  }
  const of = (version: string) => {
    const found = byVersion.get(version);
    if (found === undefined) throw new Error(`no document for API version ${version}`);
    return found;
  };
  return {
    isOlder: (version): version is string =>
      version !== undefined && version !== set.registry[0].version,

    refuseAdded(version, operationId, request) {
      const { api, routes } = of(version);
      if (api.getOperation(operationId) !== undefined) return;
      throw notRouted(routes, request);
    },

    bringUp(version, operationId, sent, parsed) {
      const { api } = of(version);
      // A copy, so that the parse the router keeps on the request it parsed stays the newest's.
      const validation = api.validator.validateRequest({ ...sent }, operationId);
      if (validation.errors) {
        throw invalidRequest(
          validation.errors,
          api.getOperation(operationId)!,
          newestTakes(sent, operationId) ? validInVersion(set.registry[0].version) : '',
        );
      }
      const query: Record<string, string[]> = {};
      for (const [name, value] of Object.entries(sent.query ?? {}))
        query[name] = Array.isArray(value) ? value.map(String) : [String(value)];
      const up = requestUp(
        version,
        { operationId, query, body: sent.body as Json | undefined },
        set.registry,
      );
      for (const request of [sent, parsed]) {
        // In place: the parse is kept on its query object (shims/compiled-router.ts).
        const target = request.query as Record<string, string | string[]>;
        for (const name of Object.keys(target)) if (!(name in up.query)) delete target[name];
        for (const [name, values] of Object.entries(up.query))
          target[name] = values.length === 1 ? values[0] : values;
        request.body = up.body;
        // Validated as the newest version next: the header named the older one.
        delete request.headers['api-version'];
      }
      parsed.requestBody = up.body;
    },

    bringDown(version, operationId, reply) {
      if (reply.body === undefined || reply.contentType === 'application/problem+json')
        return reply;
      // The handler's answer is this request's alone: brought down where it is, not copied.
      const { body } = answerDown(
        version,
        { operationId, status: reply.status, body: reply.body as Json },
        set.registry,
        { inPlace: true },
      );
      return { ...reply, body };
    },

    writeBody: (version) => of(version).writeBody,
  };
}
