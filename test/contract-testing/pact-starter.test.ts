/**
 * The Pact consumer starter (clients/typescript/examples/pact-consumer) as an integration gets it:
 * copied out of the repository, installed from its own lockfile with `npm ci --offline` (from npm's
 * cache, where the project's own install put every package it locks), its `npm test` writes a
 * pact, and verify-pact verifies that pact against the real service.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/paths';
import { contractCli } from './pacts';

const starter = path.join(projectRoot, 'clients', 'typescript', 'examples', 'pact-consumer');
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-pact-starter-'));
const copy = path.join(folder, 'my-pact');
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
// Pact colours its report even when it is not on a terminal.
const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '');

/** Runs a command without blocking this process: its exit is a rejection naming what it printed. */
const run = (command: string, args: string[]) =>
  promisify(execFile)(command, args, { cwd: copy, encoding: 'utf8', timeout: 240_000 });

/** `name@version` → integrity, for every package a lockfile holds. */
function lockedPackages(lockfile: string): Map<string, string> {
  const packages: Record<string, { name?: string; version: string; integrity?: string }> =
    readJson(lockfile).packages;
  return new Map(
    Object.entries(packages)
      .filter(([location]) => location !== '')
      .map(([location, entry]) => {
        const name = entry.name ?? location.slice(location.lastIndexOf('node_modules/') + 13);
        return [`${name}@${entry.version}`, entry.integrity ?? ''];
      }),
  );
}

afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

it('pins the versions make test runs, as the README says, and locks no package the project does not lock', () => {
  const own = readJson(path.join(starter, 'package.json')).devDependencies;
  const project = readJson(path.join(projectRoot, 'package.json')).devDependencies;
  expect(own).toEqual(Object.fromEntries(Object.keys(own).map((name) => [name, project[name]])));
  const readme = fs.readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
  for (const name of ['@pact-foundation/pact', 'jest', 'ts-jest', 'typescript']) {
    expect(readme).toContain(`\`${name}\` ${own[name]}`);
  }
  // The starter's lock is the project's, pruned (copy package-lock.json into the starter, then
  // `npm install --package-lock-only --prefer-offline` there): one resolved afresh takes newer
  // releases, which npm ci --offline cannot find in a cache the project's install filled.
  const locked = lockedPackages(path.join(projectRoot, 'package-lock.json'));
  const unlocked = [...lockedPackages(path.join(starter, 'package-lock.json'))]
    .filter(([key, integrity]) => locked.get(key) !== integrity)
    .map(([key]) => key);
  expect(unlocked).toEqual([]);
});

describe('copied out and installed from its own lockfile, offline', () => {
  let installWarnings = '';
  beforeAll(async () => {
    fs.cpSync(starter, copy, {
      recursive: true,
      filter: (source) => !['node_modules', 'pacts'].includes(path.basename(source)),
    });
    installWarnings = (await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'])).stderr;
  }, 300_000);

  it("warns, on Node 20 only, that Pact's packages declare Node 22 (as the README says)", () => {
    const unsupported = [...installWarnings.matchAll(/EBADENGINE +package: '(@?[^@']+)@/g)];
    expect(unsupported.map((warning) => warning[1]).sort()).toEqual(
      process.versions.node.startsWith('20.')
        ? ['@pact-foundation/pact', '@pact-foundation/pact-core']
        : [],
    );
  });

  it('passes its npm test, which writes its pact to ./pacts, and verify-pact verifies that pact against the service', async () => {
    const tested = await run('npm', ['test']);
    expect(tested.stderr).toMatch(/^Tests: +(\d+) passed, \1 total$/m);
    const pacts = path.join(copy, 'pacts');
    expect(fs.readdirSync(pacts)).toEqual(['my-integration-task-tracker.json']);
    const { interactions } = readJson(path.join(pacts, 'my-integration-task-tracker.json'));
    expect(interactions.length).toBeGreaterThan(0);

    const verified = await contractCli('verify-pact', pacts);
    expect({ code: verified.code, report: plain(verified.stdout) }).toEqual({
      code: 0,
      report: expect.stringContaining(
        `verify-pact: ${interactions.length} interactions of 1 pact(s) verified`,
      ),
    });
  }, 300_000);
});
