/**
 * Bi-directional contract testing without a broker: each HTTP interaction of a pact compared with
 * the OpenAPI document, offline, by PactFlow's own comparator (`@pactflow/swagger-mock-validator`).
 * Message interactions are left to `verify-pact`: the comparator knows only HTTP.
 */
import fs from 'node:fs';
import YAML from 'yaml';
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

export async function checkPacts(document: string, pacts: PactFile[]): Promise<PactCheck[]> {
  const validator = await createValidator();
  const parsed = YAML.parse(fs.readFileSync(document, 'utf8')) as SchemaNode;
  const checks: PactCheck[] = [];
  for (const pact of pacts) {
    if (pact.messagesOnly) {
      checks.push({ pact, success: true, errors: [], warnings: [] });
      continue;
    }
    const outcome = await validator.validate({ specPathOrUrl: document, mockPathOrUrl: pact.path });
    checks.push({
      pact,
      success: outcome.success,
      errors: outcome.errors.map((finding) => nameUnknownFields(finding, parsed)),
      warnings: outcome.warnings,
    });
  }
  return checks;
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
    .map(({ pact, success, errors, warnings }) =>
      [
        `${pact.path} (${pact.consumer} → ${pact.provider}): ${pact.messagesOnly ? 'messages only, which verify-pact verifies' : success ? 'compatible with the document' : `${errors.length} incompatible with the document`}`,
        ...errors.map(describe),
        ...warnings.map(describe),
      ].join('\n'),
    )
    .join('\n\n');
}
