/**
 * Pact files for the tests, written as Pact V3 JSON the way a consumer's Pact library writes
 * them, and a verification of them against a running service.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readPactFiles } from '../../src/contract-testing/pact-files';
import { projectRoot } from '../../src/paths';
import type { Sandbox } from '../../src/contract-testing/tenant-api';
import { verifyPacts, type VerificationOutcome } from '../../src/contract-testing/verify-pacts';
import type { TestService } from '../support/test-service';

/** Made on the first pact written, so that importing the helpers alone makes nothing. */
let folder: string | undefined;
let written = 0;

/** A value Pact fills in from the provider state's values (`fromProviderState`). */
export const fromState = (expression: string) => ({
  type: 'ProviderState',
  expression,
  dataType: 'STRING',
});

/** A header with any value: the provider's own, matched by type. */
export const anyValue = { combine: 'AND', matchers: [{ match: 'type' }] };
export const jsonContent = {
  combine: 'AND',
  matchers: [{ match: 'regex', regex: '^application/(problem\\+)?json(;.*)?$' }],
};

/** A GET of what the states made, its id injected into the path from the states' values. */
export function readOf(
  description: string,
  providerStates: object[],
  pathTemplate: string,
  response: object,
) {
  return {
    description,
    providerStates,
    request: {
      method: 'GET',
      path: pathTemplate.replace(/\$\{\w+\}/g, '0193a5b3-1d20-7e55-8c3f-6a7b8c9d0e12'),
      headers: { Authorization: 'Bearer some-key' },
      generators: { path: fromState(pathTemplate) },
    },
    response,
  };
}

export function writePact(
  content: { interactions?: object[]; messages?: object[] },
  consumer = 'test-consumer',
  specification = '3.0.0',
): string {
  written += 1;
  folder ??= fs.mkdtempSync(path.join(os.tmpdir(), 'tt-pacts-'));
  const file = path.join(folder, `pact-${written}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify({
      consumer: { name: consumer },
      provider: { name: 'task-tracker' },
      ...content,
      metadata: { pactSpecification: { version: specification } },
    }),
  );
  return file;
}

export function sandboxOf(api: TestService): Sandbox {
  return { url: api.baseUrl, issueKey: (tenant, scopes) => api.createKey(tenant, scopes) };
}

export async function verify(api: TestService, file: string): Promise<VerificationOutcome> {
  return verifyPacts(sandboxOf(api), readPactFiles([file]), { logLevel: 'error' });
}

/** Each interaction's result as `description: OK` or its mismatches, for one readable assertion. */
export function resultsOf(outcome: VerificationOutcome): Record<string, string> {
  const results = (outcome.results.interactionResults ?? []) as {
    description: string;
    result: string;
    mismatch?: unknown;
  }[];
  return Object.fromEntries(
    results.map((result) => [
      result.description,
      result.result === 'OK' ? 'OK' : JSON.stringify(result.mismatch),
    ]),
  );
}

export function removePacts(): void {
  if (folder) fs.rmSync(folder, { recursive: true, force: true });
}

/** `npm run -s contract -- ARGS` as a user runs it: its exit code and what it printed. */
export function contractCli(
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(projectRoot, 'dist', 'src', 'cli', 'contract.js'), ...args],
      { timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}
