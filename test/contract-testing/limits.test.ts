/**
 * `verify-pact` and `check-pact` on hostile pacts: one that cannot be read or is not a pact, and
 * one over the size or interaction limits, is refused with exit 2 and a message naming the file
 * (and the limit and the flag that raises it); the flags raised, the same pact is verified.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { runCli } from '../support/run-cli';
import { removePacts, writePact } from './pacts';

const entryPoint = path.join(projectRoot, 'dist', 'src', 'cli', 'contract.js');
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-contract-limits-'));
afterAll(() => {
  removePacts();
  fs.rmSync(folder, { recursive: true, force: true });
});

const contract = (...args: string[]) =>
  runCli(entryPoint, args, { ...process.env, DATABASE_URL: '' });

function writeFile(name: string, text: string): string {
  const file = path.join(folder, name);
  fs.writeFileSync(file, text);
  return file;
}

/** Three interactions without state or key, each answered 401. */
const unauthorised = writePact({
  interactions: ['first', 'second', 'third'].map((which) => ({
    description: `the ${which} request without a key`,
    request: { method: 'GET', path: '/v1/projects' },
    response: { status: 401 },
  })),
});

test.each(['verify-pact', 'check-pact'])(
  '%s: a file that is not a pact is refused with exit 2, naming the file',
  async (command) => {
    const unreadable = [
      [writeFile('nested.json', '['.repeat(50_000) + ']'.repeat(50_000)), 'is not a pact'],
      [writeFile('other.json', '{"hello": "world"}'), 'is not a pact'],
      [writePact({ messages: {} as object[] }), 'is not a pact with interactions'],
      [
        writePact({ interactions: [null as unknown as object] }),
        'is not a pact (its interaction 1',
      ],
      [path.join(folder, 'missing.json'), 'no such file or folder'],
    ];
    for (const [file, says] of unreadable) {
      const run = await contract(command, file);
      expect({ status: run.status, stderr: run.stderr }).toEqual({
        status: 2,
        stderr: expect.stringContaining(`${file}: ${says}`),
      });
    }
  },
);

test("verify-pact: a pact Pact's verifier cannot load (JSON nested 200 deep) is refused with exit 2, naming the file", async () => {
  const deep = writePact({
    interactions: [
      {
        description: 'a deep body',
        request: { method: 'GET', path: '/v1/projects' },
        response: { status: 401, body: JSON.parse('['.repeat(200) + ']'.repeat(200)) },
      },
    ],
  });
  const run = await contract('verify-pact', deep);
  expect(run.status).toBe(2);
  expect(run.stderr).toContain(`Failed to load pact '${deep}'`);
});

test('verify-pact: a pact over --max-bytes or --max-interactions is refused with exit 2 saying the limit; at the limits it is verified', async () => {
  const size = fs.statSync(unauthorised).size;
  const tooBig = await contract('verify-pact', '--max-bytes', String(size - 1), unauthorised);
  expect(tooBig.status).toBe(2);
  expect(tooBig.stderr).toContain(
    `${unauthorised}: is ${size} bytes, more than the limit of ${size - 1} bytes per pact file; raise it with --max-bytes ${size}`,
  );
  const tooMany = await contract('verify-pact', '--max-interactions', '2', unauthorised);
  expect(tooMany.status).toBe(2);
  expect(tooMany.stderr).toContain(
    `${unauthorised}: has 3 interactions, more than the limit of 2 per pact file; raise it with --max-interactions 3`,
  );

  const raised = ['--max-bytes', String(size), '--max-interactions', '3', unauthorised];
  const run = await contract('verify-pact', ...raised);
  expect(run.stdout).toContain('verify-pact: 3 interactions of 1 pact(s) verified');
  expect(run.status).toBe(0);
});

test.each(['verify-pact', 'check-pact'])(
  '%s: a file over the default 10 MB is refused from its size, unread',
  async (command) => {
    // Sparse: 11 MB to stat, nothing on disk, and not JSON, so reading it would fail otherwise.
    const big = writeFile('big.json', '');
    fs.truncateSync(big, 11 * 1024 * 1024);
    const run = await contract(command, big);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(
      `${big}: is 11534336 bytes, more than the limit of 10 MB (10485760 bytes) per pact file; raise it with --max-bytes 11534336`,
    );
  },
);

test('the limits take positive whole numbers only: anything else is a usage error (exit 2)', async () => {
  for (const [flag, value] of [
    ['--max-bytes', '0'],
    ['--max-bytes', '1.5'],
    ['--max-interactions', 'many'],
    ['--max-interactions', '99999999999999999999'],
  ]) {
    const run = await contract('check-pact', `${flag}=${value}`, unauthorised);
    expect({ status: run.status, stderr: run.stderr }).toEqual({
      status: 2,
      stderr: expect.stringContaining(`${flag} takes a positive whole number, not "${value}"`),
    });
  }
});
