/**
 * What the service publishes of its API versions, without a key: `GET /versions` (each version,
 * newest first, with what it changed) and `GET /openapi/VERSION.json|yaml` (each version's
 * document: the newest's is the one the service runs on, the older ones' the documents made from
 * it, read from openapi/versions/ when first asked for).
 */
import fs from 'node:fs';
import type { Document } from 'openapi-backend';
import { documentFileOf } from '../versions/documents';
import { newestVersion, versions } from '../versions/versions';
import type { ContractDocument } from './document';

export interface PublishedVersion {
  version: string;
  released_on: string;
  status: 'supported' | 'deprecated';
  changes: string[];
}

/** Each version, newest first: `deprecated` when the registry or the configuration says so. */
export function publishedVersions(
  deprecated: ReadonlySet<string> | ReadonlyMap<string, unknown> = new Set(),
): PublishedVersion[] {
  return versions.map((entry) => ({
    version: entry.version,
    released_on: entry.releasedOn,
    status: deprecated.has(entry.version) ? 'deprecated' : entry.status,
    changes: entry.changes.map((change) => change.sentence),
  }));
}

/** The body of `GET /versions`. */
export const versionsBody = (deprecated?: ReadonlySet<string> | ReadonlyMap<string, unknown>) =>
  JSON.stringify({ data: publishedVersions(deprecated) });

export type DocumentFormat = 'json' | 'yaml';

/**
 * Each supported version's document in both published forms (`file`, by `VERSION.json` or
 * `VERSION.yaml`), and parsed (`definition`: an older one's parsed anew at each call, for a reader
 * that keeps what it makes of it rather than the whole parse).
 */
export function versionDocuments(newest: ContractDocument) {
  const made = new Map<string, { json: string; yaml: string }>([
    [newestVersion, { json: newest.json, yaml: newest.yaml }],
  ]);
  const formsOf = (version: string) => {
    let forms = made.get(version);
    if (forms === undefined) {
      const yaml = fs.readFileSync(documentFileOf(version), 'utf8');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- only when an older version's document is asked for
      const parsed: unknown = (require('yaml') as typeof import('yaml')).parse(yaml);
      forms = { yaml, json: JSON.stringify(parsed) };
      made.set(version, forms);
    }
    return forms;
  };
  return {
    definition: (version: string): Document =>
      version === newestVersion
        ? newest.definition
        : (JSON.parse(formsOf(version).json) as Document),
    file(file: string): { text: string; format: DocumentFormat } | undefined {
      const match = /^(\d{4}-\d{2}-\d{2})\.(json|yaml)$/.exec(file);
      if (!match || !versions.some((entry) => entry.version === match[1])) return undefined;
      const [, version, format] = match as unknown as [string, string, DocumentFormat];
      return { text: formsOf(version)[format], format };
    },
  };
}
