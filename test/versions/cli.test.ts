import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { run, type Context } from '../../src/cli/versions';
import { projectRoot } from '../../src/paths';
import { removeProperty } from '../../src/versions/change';
import type { SupportedVersion } from '../../src/versions/versions';

const registry: SupportedVersion[] = [
  {
    version: '2027-01-01',
    releasedOn: '2027-01-01',
    status: 'supported',
    changes: [
      {
        sentence: 'A thing has a size.',
        document: (newer) => (removeProperty(newer, '/components/schemas/Thing', 'size'), newer),
      },
    ],
  },
  {
    version: '2026-11-28',
    releasedOn: '2026-11-28',
    status: 'supported',
    changes: [],
    released: 'openapi/released/1.0.0.yaml',
  },
];

const thing = (properties: Record<string, unknown>) => ({
  openapi: '3.0.3',
  info: { title: 'Things', version: '1.0.0' },
  paths: {},
  components: { schemas: { Thing: { type: 'object', properties } } },
});

let root: string;
let lines: string[];
const context = (): Partial<Context> => ({
  root,
  registry,
  log: (line) => lines.push(line),
  error: (line) => lines.push(`error: ${line}`),
});
const put = (file: string, value: unknown) => {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  fs.writeFileSync(
    path.join(root, file),
    typeof value === 'string' ? value : YAML.stringify(value),
  );
};

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'versions-cli-'));
  lines = [];
  put('openapi/openapi.yaml', thing({ id: { type: 'string' }, size: { type: 'integer' } }));
  put('openapi/released/1.0.0.yaml', thing({ id: { type: 'string' } }));
  put('src/versions/allowed-differences.yaml', 'differences: []\n');
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

it('check names a missing or stale made document or changelog; write makes them up to date', () => {
  expect(run(['check'], context())).toBe(1);
  expect(lines.slice(0, 2)).toEqual([
    'error: openapi/versions/2026-11-28.yaml: missing',
    'error: docs/api-versions.md: stale',
  ]);
  lines = [];
  expect(run(['write'], context())).toBe(0);
  expect(lines).toEqual(['wrote openapi/versions/2026-11-28.yaml', 'wrote docs/api-versions.md']);
  // The changelog says, version by version, what each version's modules say.
  const changelog = fs.readFileSync(path.join(root, 'docs', 'api-versions.md'), 'utf8');
  expect(changelog).toMatch(
    /## 2027-01-01\n\nReleased on 2027-01-01; supported\.\n\n- A thing has a size\./,
  );
  expect(changelog.indexOf('## 2027-01-01')).toBeLessThan(changelog.indexOf('## 2026-11-28'));
  lines = [];
  expect(run(['check'], context())).toBe(0);

  put(
    'openapi/openapi.yaml',
    thing({ id: { type: 'string', maxLength: 36 }, size: { type: 'integer' } }),
  );
  lines = [];
  expect(run(['check'], context())).toBe(1);
  expect(lines).toEqual([
    'error: openapi/versions/2026-11-28.yaml: stale',
    'error: Run `npm run -s versions -- write` and commit what it writes.',
  ]);
});

it('gate passes when the made document is the released one, and prints each unexplained difference', () => {
  expect(run(['gate'], context())).toBe(0);
  expect(lines).toEqual([
    '2026-11-28: its made document equals openapi/released/1.0.0.yaml, prose aside and 0 allowed difference(s).',
  ]);
  put(
    'openapi/openapi.yaml',
    thing({ id: { type: 'string', maxLength: 36 }, size: { type: 'integer' } }),
  );
  lines = [];
  expect(run(['gate'], context())).toBe(1);
  expect(lines[0]).toBe(
    'error: 2026-11-28: added /components/schemas/Thing/properties/id/maxLength: 36',
  );
  expect(lines).toHaveLength(2);
});

it('gate fails on a stale allow-list entry and on a malformed allow-list', () => {
  const entry = { version: '2026-11-28', pointer: '/x', kind: 'added', reason: 'None.' };
  put('src/versions/allowed-differences.yaml', { differences: [entry] });
  expect(run(['gate'], context())).toBe(1);
  expect(lines).toEqual([
    'error: src/versions/allowed-differences.yaml: stale allow-list entry: 2026-11-28 added /x matches no difference',
  ]);
  put('src/versions/allowed-differences.yaml', { differences: [{ ...entry, kind: 'moved' }] });
  lines = [];
  expect(run(['gate'], context())).toBe(1);
  expect(lines[0]).toMatch(/entry 1: kind is not one of added, removed, changed/);
});

it('exits 2 on bad arguments', () => {
  for (const args of [[], ['wrte'], ['check', 'gate'], ['toString']]) {
    lines = [];
    expect(run(args, context())).toBe(2);
    expect(lines).toEqual(['error: usage: versions write | check | gate']);
  }
});

it('runs compiled, as npm run -s versions does', () => {
  const cli = path.join(projectRoot, 'dist/src/cli/versions.js');
  const bad = spawnSync(process.execPath, [cli, 'nonsense'], { encoding: 'utf8' });
  expect([bad.status, bad.stderr]).toEqual([2, 'usage: versions write | check | gate\n']);
  const check = spawnSync(process.execPath, [cli, 'check'], { encoding: 'utf8' });
  expect([check.status, check.stderr]).toEqual([0, '']);
});
