/**
 * Bi-directional contract testing without a broker: each HTTP interaction of a pact compared with
 * the OpenAPI document, offline, by PactFlow's own comparator (`@pactflow/swagger-mock-validator`).
 * Message interactions are left to `verify-pact`: the comparator knows only HTTP.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { documentFileOf } from '../versions/documents';
import { defaultInteractionVersion, interactionVersion } from './interaction-versions';
import type { PactFile } from './pact-files';

/** One finding of the comparator, as it reports it. */
export interface PactFinding {
  type: 'error' | 'warning';
  code: string;
  message: string;
  mockDetails: {
    interactionDescription?: string;
    interactionState?: string;
    location: string;
    value?: unknown;
  };
  specDetails: { location: string; pathMethod?: string; pathName?: string };
}

export interface PactCheck {
  pact: PactFile;
  success: boolean;
  errors: PactFinding[];
  warnings: PactFinding[];
  /** Message interactions beside the HTTP ones: the comparator knows only HTTP, verify-pact checks them. */
  messagesNotChecked?: number;
}

interface Validator {
  validate(options: { specPathOrUrl: string; mockPathOrUrl: string }): Promise<{
    success: boolean;
    errors: PactFinding[];
    warnings: PactFinding[];
  }>;
}

/** The comparator ships as an ES module only; this CommonJS build loads it with import(). */
async function createValidator(): Promise<Validator> {
  const module: { SwaggerMockValidatorFactory: { create(): Validator } } = await import(
    '@pactflow/swagger-mock-validator' as string
  );
  return module.SwaggerMockValidatorFactory.create();
}

type SchemaNode = { $ref?: string; properties?: Record<string, unknown>; [key: string]: unknown };

/**
 * The comparator names the field a response has and the document does not, but not one a
 * request has: the names are read here from the schema it points at, so both say which field.
 */
function nameUnknownFields(finding: PactFinding, document: SchemaNode): PactFinding {
  const value = finding.mockDetails.value;
  const segments = finding.specDetails.location.replace(/^\[root\]\./, '').split('.');
  if (finding.code !== 'request.body.incompatible' || segments.pop() !== 'additionalProperties')
    return finding;
  if (!value || typeof value !== 'object' || Array.isArray(value)) return finding;
  const resolve = (node: SchemaNode | undefined): SchemaNode | undefined =>
    node?.$ref?.startsWith('#/')
      ? resolve(
          node.$ref
            .slice(2)
            .split('/')
            .reduce<SchemaNode | undefined>((at, key) => at?.[key] as SchemaNode, document),
        )
      : node;
  let schema: SchemaNode | undefined = document;
  for (const segment of segments) schema = resolve(resolve(schema)?.[segment] as SchemaNode);
  const known = Object.keys(resolve(schema)?.properties ?? {});
  const unknown = Object.keys(value).filter((field) => !known.includes(field));
  if (!schema || unknown.length === 0) return finding;
  return { ...finding, message: `${finding.message} - ${unknown.join(', ')}` };
}

/**
 * Each pact's HTTP interactions, each against its own version's document (interactionVersion):
 * a pact whose interactions are in several versions is checked in parts, one per version.
 */
export async function checkPacts(
  pacts: PactFile[],
  fallbackVersion: string = defaultInteractionVersion,
): Promise<PactCheck[]> {
  const validator = await createValidator();
  const parsed = new Map<string, SchemaNode>();
  const documentNamed = (file: string) => {
    if (!parsed.has(file))
      parsed.set(file, YAML.parse(fs.readFileSync(file, 'utf8')) as SchemaNode);
    return parsed.get(file)!;
  };
  const checks: PactCheck[] = [];
  for (const pact of pacts) {
    if (pact.messagesOnly) {
      checks.push({ pact, success: true, errors: [], warnings: [] });
      continue;
    }
    const check: PactCheck = { pact, success: true, errors: [], warnings: [] };
    const { parts, messages, cleanUp } = pactsByVersion(pact, fallbackVersion);
    check.messagesNotChecked = messages;
    try {
      for (const { version, file } of parts) {
        const document = documentFileOf(version);
        const outcome = await validator.validate({ specPathOrUrl: document, mockPathOrUrl: file });
        check.success &&= outcome.success;
        check.errors.push(
          ...outcome.errors.map((finding) => nameUnknownFields(finding, documentNamed(document))),
        );
        check.warnings.push(...outcome.warnings);
      }
    } finally {
      cleanUp();
    }
    checks.push(check);
  }
  return checks;
}

/**
 * The pact as files of one version each: itself when all its interactions are in one, otherwise
 * a copy per version holding that version's interactions, removed after.
 */
function pactsByVersion(pact: PactFile, fallbackVersion: string) {
  const raw = JSON.parse(fs.readFileSync(pact.path, 'utf8')) as {
    interactions?: unknown[];
    messages?: unknown[];
  };
  const messages =
    (raw.interactions ?? []).filter(
      (interaction) => !(interaction as { request?: unknown }).request,
    ).length + (raw.messages?.length ?? 0);
  const byVersion = new Map<string, unknown[]>();
  for (const interaction of raw.interactions ?? []) {
    const version = interactionVersion(
      interaction as { request?: { headers?: unknown } },
      fallbackVersion,
    );
    byVersion.set(version, [...(byVersion.get(version) ?? []), interaction]);
  }
  if (byVersion.size <= 1) {
    const [version = fallbackVersion] = byVersion.keys();
    return { parts: [{ version, file: pact.path }], messages, cleanUp: () => {} };
  }
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'task-tracker-check-pact-'));
  const parts = [...byVersion].map(([version, interactions], i) => {
    const file = path.join(folder, `${i}.json`);
    fs.writeFileSync(file, JSON.stringify({ ...raw, interactions }));
    return { version, file };
  });
  return {
    parts,
    messages,
    cleanUp: () => fs.rmSync(folder, { recursive: true, force: true }),
  };
}

function describe(finding: PactFinding): string {
  const { mockDetails, specDetails } = finding;
  const operation = specDetails.pathMethod
    ? ` (${specDetails.pathMethod.toUpperCase()} ${specDetails.pathName})`
    : '';
  return [
    `  ${finding.type} in "${mockDetails.interactionDescription ?? '(the pact)'}"${operation}`,
    `    where: ${mockDetails.location}`,
    `    why:   ${finding.message} [${finding.code}]`,
    `    document: ${specDetails.location}`,
  ].join('\n');
}

/** The report: per pact, compatible or each incompatibility with its interaction, place and reason. */
export function checkReport(checks: PactCheck[]): string {
  return checks
    .map(({ pact, success, errors, warnings, messagesNotChecked }) =>
      [
        `${pact.path} (${pact.consumer} → ${pact.provider}): ${pact.messagesOnly ? 'messages only, which verify-pact verifies' : success ? 'compatible with the document' : `${errors.length} incompatible with the document`}${messagesNotChecked ? `; ${messagesNotChecked} message interaction(s) not checked here (verify-pact verifies them)` : ''}`,
        ...errors.map(describe),
        ...warnings.map(describe),
      ].join('\n'),
    )
    .join('\n\n');
}
