/**
 * The older versions' documents, made from the newest (openapi/openapi.yaml, written by hand) and
 * the changes since each, and checked in under openapi/versions/ like generated/: readers (the
 * service, Prism, the client kit) take the files, and `versions check` fails when one is stale.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import YAML from 'yaml';
import { openapiDocumentPath, projectRoot } from '../paths';
import { objectAt, type JsonObject } from './change';
import { changesSince, newestVersion, versions, type SupportedVersion } from './versions';

/** Where a document names the version it describes, besides `info.version`: the `Api-Version` header's. */
const versionHeaders = ['/components/parameters/ApiVersion', '/components/headers/ApiVersion'];

/**
 * A deep copy of the newest document with every change newer than `version` undone, newest first,
 * naming `version` in its `info.version` and as the one value of its `Api-Version` header, request
 * and answer (a client of that document sends and receives that version, whatever others exist).
 */
export function documentFor(
  version: string,
  newestDocument: JsonObject,
  registry: readonly SupportedVersion[] = versions,
): JsonObject {
  let document = structuredClone(newestDocument);
  for (const change of changesSince(version, registry)) document = change.document(document);
  const info = (document.info ?? {}) as JsonObject;
  document.info = { ...info, version };
  for (const pointer of versionHeaders) {
    let header: JsonObject | undefined;
    try {
      header = objectAt(document, pointer);
    } catch {
      continue; // a document without the header (the tests' small ones) names no version there
    }
    header.schema = { ...(header.schema as JsonObject), enum: [version] };
    if ('example' in header) header.example = version;
  }
  signDeliveryExample(document);
  return document;
}

const deliveryCallback =
  '/paths/~1v1~1webhook-endpoints/post/callbacks/event/{$request.body#~1url}/post';

/**
 * The delivery's example `webhook-signature` is the example secret's over the example event as
 * this version shows it: signed again once the changes have brought the event down, so that a
 * receiver tested with a version's examples verifies them.
 */
function signDeliveryExample(document: JsonObject): void {
  let callback: JsonObject;
  try {
    callback = objectAt(document, deliveryCallback);
  } catch {
    return; // a document without deliveries (the tests' small ones)
  }
  const examples = objectAt(document, '/components/examples');
  const event = (examples.DeliveredEvent as JsonObject | undefined)?.value;
  const secret = ((examples.NewWebhookEndpoint as JsonObject | undefined)?.value as JsonObject)
    ?.secret;
  const parameters = callback.parameters as JsonObject[];
  const example = (name: string) => parameters.find((p) => p.name === name);
  const [id, timestamp, signature] = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map(
    example,
  );
  if (event === undefined || typeof secret !== 'string' || !id || !timestamp || !signature) return;
  signature.example = new Webhook(secret).sign(
    String(id.example),
    new Date(Number(timestamp.example) * 1000),
    JSON.stringify(event),
  );
}

/** Where the made documents live, from the project's root. */
export const madeDocumentsFolder = 'openapi/versions';

/** The file of a supported version's document: the newest's is the hand-written one. */
export function documentFileOf(version: string): string {
  return version === newestVersion
    ? openapiDocumentPath
    : path.join(projectRoot, madeDocumentsFolder, `${version}.yaml`);
}

export interface MadeDocument {
  /** From the project's root, e.g. openapi/versions/2026-11-28.yaml. */
  file: string;
  text: string;
}

/** The text of a made document: a line saying where it comes from, then the YAML. */
export function madeDocumentText(document: JsonObject): string {
  const origin = `# Made by \`npm run -s versions -- write\` from openapi/openapi.yaml and src/versions/: do not edit.\n`;
  // No folded lines and no anchors: the file reads like the hand-written one and diffs plainly.
  // Written as YAML 1.1, so that a string a YAML 1.1 reader (js-yaml: Prism, openapi-diff) would
  // take for a date or a boolean (2026-11-28, yes) is quoted.
  return (
    origin +
    YAML.stringify(document, { lineWidth: 0, aliasDuplicateObjects: false, version: '1.1' })
  );
}

/** Every supported version's document but the newest's (which is openapi/openapi.yaml itself). */
export function madeDocuments(
  newestDocument: JsonObject,
  registry: readonly SupportedVersion[] = versions,
): MadeDocument[] {
  return registry.slice(1).map(({ version }) => ({
    file: `${madeDocumentsFolder}/${version}.yaml`,
    text: madeDocumentText(documentFor(version, newestDocument, registry)),
  }));
}

/** The YAML files in the folder now, from the project's root. */
function filesThere(root: string): string[] {
  const folder = path.join(root, madeDocumentsFolder);
  if (!fs.existsSync(folder)) return [];
  return fs
    .readdirSync(folder)
    .filter((name) => name.endsWith('.yaml'))
    .map((name) => `${madeDocumentsFolder}/${name}`);
}

export interface StaleDocument {
  file: string;
  problem: 'missing' | 'stale' | 'not a supported version';
}

/** What differs between the folder and the documents made: nothing when it is up to date. */
function compareWithFolder(made: MadeDocument[], root: string): StaleDocument[] {
  const problems: StaleDocument[] = [];
  for (const { file, text } of made) {
    const target = path.join(root, file);
    if (!fs.existsSync(target)) problems.push({ file, problem: 'missing' });
    else if (fs.readFileSync(target, 'utf8') !== text) problems.push({ file, problem: 'stale' });
  }
  const expected = new Set(made.map(({ file }) => file));
  for (const file of filesThere(root).filter((other) => !expected.has(other)))
    problems.push({ file, problem: 'not a supported version' });
  return problems;
}

/** What `writeMadeDocuments` would change under `root`: nothing when the folder is up to date. */
export function staleMadeDocuments(
  newestDocument: JsonObject,
  registry: readonly SupportedVersion[] = versions,
  root: string = projectRoot,
): StaleDocument[] {
  return compareWithFolder(madeDocuments(newestDocument, registry), root);
}

/**
 * Writes the made documents and removes those of versions no longer supported; returns the files
 * it wrote or removed (a file already up to date is left alone).
 */
export function writeMadeDocuments(
  newestDocument: JsonObject,
  registry: readonly SupportedVersion[] = versions,
  root: string = projectRoot,
): string[] {
  const made = madeDocuments(newestDocument, registry);
  const texts = new Map(made.map(({ file, text }) => [file, text]));
  const problems = compareWithFolder(made, root);
  for (const { file, problem } of problems) {
    const target = path.join(root, file);
    if (problem === 'not a supported version') fs.rmSync(target);
    else {
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, texts.get(file)!);
    }
  }
  return problems.map(({ file }) => file);
}
