/**
 * A second, older API version for tests of the machinery while the service has one version: the
 * real document is the newest, and in `2000-01-01` a project's `description` was called `summary`.
 */
import type { Document } from 'openapi-backend';
import type { VersionSet } from '../../src/http/older-versions';
import { objectAt, type JsonObject, type VersionChange } from '../../src/versions/change';
import { documentFor } from '../../src/versions/documents';
import { versions } from '../../src/versions/versions';

export const olderVersion = '2000-01-01';

const rename = (object: any, from: string, to: string) => {
  if (object === null || typeof object !== 'object' || !(from in object)) return;
  object[to] = object[from];
  delete object[from];
};

/** `description` was `summary`: in the document, requests and answers of projects. */
const summaryWasDescription: VersionChange = {
  sentence: "A project's `summary` is called `description`.",
  document(newer) {
    for (const name of ['Project', 'ProjectCreate', 'ProjectUpdate']) {
      const schema = objectAt(newer, `/components/schemas/${name}`);
      rename(schema.properties, 'description', 'summary');
      if (Array.isArray(schema.required))
        schema.required = schema.required.map((field) =>
          field === 'description' ? 'summary' : field,
        );
    }
    return newer;
  },
  request(older) {
    if (['createProject', 'updateProject'].includes(older.operationId))
      rename(older.body, 'summary', 'description');
    return older;
  },
  answer(newer) {
    const body = newer.body as any;
    if (['createProject', 'getProject', 'updateProject'].includes(newer.operationId))
      rename(body, 'description', 'summary');
    if (newer.operationId === 'listProjects')
      for (const project of body?.data ?? []) rename(project, 'description', 'summary');
    return newer;
  },
};

export function summaryVersionSet(newest: Document): VersionSet {
  const registry = [
    { ...versions[0], changes: [summaryWasDescription] },
    { version: olderVersion, releasedOn: olderVersion, status: 'supported' as const, changes: [] },
  ];
  const older = documentFor(olderVersion, newest as unknown as JsonObject, registry);
  return { registry, documents: new Map([[olderVersion, older as unknown as Document]]) };
}
