/**
 * The SQLite database holds webhook secrets: the service creates its file, the WAL files beside
 * it and a missing folder for them readable by their owner only, whatever the umask lets through.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService } from '../../src/server';
import { testConfig } from '../support/test-config';

let folder: string;
let umask: number;

beforeAll(() => {
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-file-mode-'));
  // A umask that lets others read what is made, as many systems have.
  umask = process.umask(0o022);
});
afterAll(() => {
  process.umask(umask);
  fs.rmSync(folder, { recursive: true, force: true });
});

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

it('creates the database file, its -wal and -shm, and their folder for the owner only', async () => {
  const filename = path.join(folder, 'new', 'tasks.sqlite');
  const service = await startService(testConfig({ client: 'sqlite', filename }));
  try {
    // Migrations wrote through the WAL, which stays while the database is open.
    expect({
      db: modeOf(filename),
      wal: modeOf(`${filename}-wal`),
      shm: modeOf(`${filename}-shm`),
      folder: modeOf(path.dirname(filename)),
    }).toEqual({
      db: 0o600,
      wal: 0o600,
      shm: 0o600,
      folder: 0o700,
    });
  } finally {
    await service.stop();
  }
});

it('leaves the mode of a file that exists as its operator set it', async () => {
  const filename = path.join(folder, 'tasks-shared.sqlite');
  fs.writeFileSync(filename, '', { mode: 0o640 });
  const service = await startService(testConfig({ client: 'sqlite', filename }));
  try {
    expect([modeOf(filename), modeOf(`${filename}-wal`)]).toEqual([0o640, 0o640]);
  } finally {
    await service.stop();
  }
});
