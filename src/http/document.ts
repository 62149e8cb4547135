import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Document } from 'openapi-backend';
import { openapiDocumentPath, parsedDocumentPathOf } from '../paths';

/** The contract, read once: the object the router validates with, and both published forms. */
export interface ContractDocument {
  definition: Document;
  yaml: string;
  json: string;
}

export function loadDocument(): ContractDocument {
  const yaml = fs.readFileSync(openapiDocumentPath, 'utf8');
  const definition = parsedDocument(openapiDocumentPath, yaml);
  return { definition, yaml, json: JSON.stringify(definition) };
}

/**
 * A YAML document of the project's (the contract, an older version's made document), parsed: the
 * build's parse when it parsed this very text, the YAML parser otherwise.
 */
export function parsedDocument(file: string, yaml = fs.readFileSync(file, 'utf8')): Document {
  return parsedAtBuild(file, yaml) ?? (yamlParser().parse(yaml) as Document);
}

/** The YAML parser, loaded only when there is no parse of the build's to use. */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on this path only
const yamlParser = () => require('yaml') as typeof import('yaml');

export const yamlHash = (yaml: string) => createHash('sha256').update(yaml).digest('hex');

/**
 * The document as the build parsed it, when the build parsed this very text: parsing the YAML is
 * a good part of a start, and JSON parses many times faster.
 */
function parsedAtBuild(file: string, yaml: string): Document | undefined {
  let parsed: { sha256: string; document: Document };
  try {
    parsed = JSON.parse(fs.readFileSync(parsedDocumentPathOf(file), 'utf8'));
  } catch {
    return undefined;
  }
  return parsed.sha256 === yamlHash(yaml) ? parsed.document : undefined;
}
