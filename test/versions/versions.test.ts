import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import {
  isSupportedVersion,
  newestVersion,
  versionBeforeVersions,
  versions,
} from '../../src/versions/versions';

it('lists dated versions newest first, each released on or before the next', () => {
  for (const entry of versions) {
    expect(entry.version).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(entry.releasedOn).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  }
  const dates = versions.map((entry) => entry.version);
  expect([...dates].sort().reverse()).toEqual(dates);
  expect(new Set(dates).size).toBe(dates.length);
  expect(newestVersion).toBe(dates[0]);
});

it('pins what came before versions to 2026-11-28, the contract of released document 1.5.0', () => {
  expect(versionBeforeVersions).toBe('2026-11-28');
  expect(isSupportedVersion(versionBeforeVersions)).toBe(true);
  expect(versions.find((entry) => entry.version === '2026-11-28')?.released).toBe(
    'openapi/released/1.5.0.yaml',
  );
  for (const { released } of versions)
    if (released !== undefined) expect(fs.existsSync(path.join(projectRoot, released))).toBe(true);
});

it('supports exactly the listed versions', () => {
  for (const value of ['', '2026-11-27', ' 2026-11-28', '2026-11-28,2026-11-28', '1.5.0'])
    expect(isSupportedVersion(value)).toBe(false);
});

it('gives every change a sentence', () => {
  for (const change of versions.flatMap((entry) => entry.changes))
    expect(change.sentence).toMatch(/^[A-Z`].*\.$/);
});
