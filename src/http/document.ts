import fs from 'node:fs';
import type { Document } from 'openapi-backend';
import YAML from 'yaml';
import { openapiDocumentPath } from '../paths';

/** The contract, read once: the object the router validates with, and both published forms. */
export interface ContractDocument {
  definition: Document;
  yaml: string;
  json: string;
}

export function loadDocument(): ContractDocument {
  const yaml = fs.readFileSync(openapiDocumentPath, 'utf8');
  const definition = YAML.parse(yaml) as Document;
  return { definition, yaml, json: JSON.stringify(definition) };
}
