/**
 * Bi-directional contract testing without a broker: each HTTP interaction of a pact compared with
 * the OpenAPI document, offline, by PactFlow's own comparator (`@pactflow/swagger-mock-validator`).
 * Message interactions are left to `verify-pact`: the comparator knows only HTTP.
 */
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

export async function checkPacts(document: string, pacts: PactFile[]): Promise<PactCheck[]> {
  const validator = await createValidator();
  const checks: PactCheck[] = [];
  for (const pact of pacts) {
    const outcome = await validator.validate({ specPathOrUrl: document, mockPathOrUrl: pact.path });
    checks.push({
      pact,
      success: outcome.success,
      errors: outcome.errors,
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
        `${pact.path} (${pact.consumer} → ${pact.provider}): ${success ? 'compatible with the document' : `${errors.length} incompatible with the document`}`,
        ...errors.map(describe),
        ...warnings.map(describe),
      ].join('\n'),
    )
    .join('\n\n');
}
