// ts-jest compiles the tests and checks their types, as tsc would with tsconfig.json.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': 'ts-jest' },
  testMatch: ['<rootDir>/*.pact.test.ts'],
  testTimeout: 30000,
};

// Pact's core reports anonymous usage to the internet unless told not to; the test workers
// inherit this. Delete the line to let it report.
process.env.PACT_DO_NOT_TRACK = 'true';
