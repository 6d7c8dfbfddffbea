'use strict';
// Two projects: `unit` (next to the code, no I/O) and `integration` (real Kafka and MongoDB-wire servers, whose
// addresses come from KAFKA_BROKERS / MONGO_URL; `npm test` starts them, see deploy/local/test.js).
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }] };
const moduleNameMapper = { '^@vigil/proto$': '<rootDir>/proto/src/index.ts' };
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
      globalSetup: '<rootDir>/deploy/test-support/global-setup.js',
      globalTeardown: '<rootDir>/deploy/test-support/global-teardown.js',
      slowTestThreshold: 30,
    },
  ],
  testTimeout: 120000,
};
