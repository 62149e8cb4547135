/**
 * Contract testing for integrations (see the README's section for integrations):
 *
 *   npm run -s contract -- verify-pact [--junit FILE] [--provider-version V] [--api-version V] [LIMITS] FILE_OR_FOLDER...
 *     every interaction of the pacts verified by Pact's verifier against a sandbox of its own
 *   npm run -s contract -- check-pact [--api-version V] [LIMITS] FILE_OR_FOLDER...
 *     every HTTP interaction compared with its API version's document, no service running
 *   npm run -s contract -- upgrade-report --to VERSION [--api-version V] [--json] PACT_OR_HAR...
 *     for each exchange, the changes between its API version and VERSION that touch it
 *
 * LIMITS: --max-bytes N (10 MB) and --max-interactions N (5000), per pact file.
 * Exit 0 when everything passed, 1 when an interaction failed, 2 on bad arguments or an
 * unreadable pact, or one over the limits.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from '../config';
import { checkPacts, checkReport } from '../contract-testing/check-pacts';
import { exchangesOf, exchangeText } from '../contract-testing/exchanges';
import { defaultInteractionVersion } from '../contract-testing/interaction-versions';
import { upgradeReport, upgradeText } from '../contract-testing/upgrade-report';
import { loadDocument } from '../http/document';
import { isSupportedVersion, supportedVersions } from '../versions/versions';
import { junitReport } from '../contract-testing/junit';
import {
  defaultPactLimits,
  PactFileError,
  readPactFiles,
  type PactFile,
} from '../contract-testing/pact-files';
import type { Sandbox } from '../contract-testing/tenant-api';
import { verifyPacts } from '../contract-testing/verify-pacts';
import { createRepositories } from '../all-repositories';
import { startService, type RunningService } from '../server';
import { issueApiKey } from './issue-api-key';
import { sandboxConfig } from './sandbox-config';

const usage = `usage:
  npm run -s contract -- verify-pact [--junit FILE] [--provider-version VERSION] [--api-version YYYY-MM-DD] [LIMITS] FILE_OR_FOLDER...
  npm run -s contract -- check-pact [--api-version YYYY-MM-DD] [LIMITS] FILE_OR_FOLDER...
  npm run -s contract -- upgrade-report --to YYYY-MM-DD [--api-version YYYY-MM-DD] [--json] PACT_OR_HAR...
LIMITS, per pact file (a bigger one is refused, exit 2):
  --max-bytes N         its size in bytes (default ${defaultPactLimits.maxBytes}, 10 MB)
  --max-interactions N  its HTTP and message interactions together (default ${defaultPactLimits.maxInteractions})`;

class UsageError extends Error {}

/** Both commands read pacts through readPacts, so both take the limits. */
const limitOptions = {
  'max-bytes': { type: 'string' },
  'max-interactions': { type: 'string' },
} as const;

function positiveInteger(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number === 0)
    throw new UsageError(`--${flag} takes a positive whole number, not ${JSON.stringify(value)}`);
  return number;
}

/** The pacts named, read within the limits the flags set. */
function readPacts(
  positionals: string[],
  values: { 'max-bytes'?: string; 'max-interactions'?: string },
): PactFile[] {
  const { maxBytes, maxInteractions } = defaultPactLimits;
  return readPactFiles(positionals, {
    maxBytes: positiveInteger('max-bytes', values['max-bytes'], maxBytes),
    maxInteractions: positiveInteger(
      'max-interactions',
      values['max-interactions'],
      maxInteractions,
    ),
  });
}

/** What the summary reads of each interaction's result in Pact's. */
interface InteractionOutcome {
  consumer?: string;
  description: string;
  result: string;
}

/** `--api-version VERSION`: the version of the interactions that send no `Api-Version`. */
const versionOption = { 'api-version': { type: 'string' } } as const;

function versionOf(value: string | undefined, flag = '--api-version'): string {
  if (value === undefined) return defaultInteractionVersion;
  if (!isSupportedVersion(value))
    throw new UsageError(
      `${flag} ${JSON.stringify(value)} is not a supported API version; the supported versions are ${supportedVersions.join(', ')}`,
    );
  return value;
}

/** The real service on a throwaway SQLite file, quiet, on a free port; removed by stop(). */
async function startSandbox(): Promise<Sandbox & { stop(): Promise<void> }> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'task-tracker-verify-pact-'));
  let service: RunningService | undefined;
  try {
    const config = sandboxConfig(path.join(folder, 'sandbox.sqlite'));
    service = await startService({ ...config, host: '127.0.0.1', port: 0, logLevel: 'silent' });
    const repositories = createRepositories(service.knex);
    const running = service;
    return {
      url: running.url,
      issueKey: async (tenant, scopes) => (await issueApiKey(repositories, tenant, scopes)).key,
      async stop() {
        await running.stop();
        fs.rmSync(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await service?.stop();
    fs.rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}

async function verifyPact(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      junit: { type: 'string' },
      'provider-version': { type: 'string' },
      ...versionOption,
      ...limitOptions,
    },
  });
  const apiVersion = versionOf(values['api-version']);
  const pacts = readPacts(positionals, values);
  const sandbox = await startSandbox();
  try {
    const started = Date.now();
    const outcome = await verifyPacts(sandbox, pacts, {
      providerVersion: values['provider-version'],
      apiVersion,
    });
    const count = pacts.reduce((sum, pact) => sum + pact.interactions.length, 0);
    if (values.junit) fs.writeFileSync(values.junit, junitReport(pacts, outcome));
    for (const { interaction, reason } of outcome.providerFailures)
      console.log(`The provider could not run "${interaction}": ${reason}`);
    const failures = ((outcome.results.interactionResults ?? []) as InteractionOutcome[]).filter(
      (result) => result.result !== 'OK',
    );
    // Pact's report says what differed; what the sandbox answered says why.
    for (const result of failures) {
      const exchanges = exchangesOf(outcome.exchanges, result);
      if (exchanges.length === 0) continue;
      console.log(
        `\nWhat "${result.description}"${result.consumer ? ` (${result.consumer})` : ''} sent and was answered:`,
      );
      for (const line of exchanges.flatMap(exchangeText)) console.log(`  ${line}`);
    }
    const failed = failures.map((result) => JSON.stringify(result.description));
    const ms = Date.now() - started;
    console.log(
      outcome.passed
        ? `verify-pact: ${count} interactions of ${pacts.length} pact(s) verified in ${ms} ms`
        : `verify-pact: ${failed.length || 'some'} of ${count} interactions of ${pacts.length} pact(s) failed${failed.length ? `: ${failed.join(', ')}` : ''} (in ${ms} ms)`,
    );
    return outcome.passed ? 0 : 1;
  } finally {
    await sandbox.stop();
  }
}

async function checkPact(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { ...versionOption, ...limitOptions },
  });
  const apiVersion = versionOf(values['api-version']);
  const checks = await checkPacts(readPacts(positionals, values), apiVersion);
  console.log(checkReport(checks));
  return checks.every((check) => check.success) ? 0 : 1;
}

async function upgrade(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      to: { type: 'string' },
      json: { type: 'boolean', default: false },
      ...versionOption,
    },
  });
  if (values.to === undefined) throw new UsageError('upgrade-report needs --to VERSION');
  if (positionals.length === 0) throw new UsageError('upgrade-report needs pact or HAR files');
  const to = versionOf(values.to, '--to');
  const fallback = versionOf(values['api-version']);
  const reports = await upgradeReport(
    positionals,
    to,
    loadDocument().definition as never,
    fallback,
  );
  console.log(values.json ? JSON.stringify({ exchanges: reports }, null, 2) : upgradeText(reports));
  return reports.some((report) => report.touched.length > 0) ? 1 : 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  try {
    if (command === 'verify-pact') return await verifyPact(args);
    if (command === 'check-pact') return await checkPact(args);
    if (command === 'upgrade-report') return await upgrade(args);
    throw new UsageError(command ? `unknown command ${JSON.stringify(command)}` : 'name a command');
  } catch (error) {
    const known = [UsageError, PactFileError, ConfigError].some((kind) => error instanceof kind);
    // parseArgs's own errors (an unknown option, a missing value) carry this code.
    if (known || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`contract: ${(error as Error).message}\n${usage}`);
      return 2;
    }
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(2);
  },
);
