/**
 * End-to-end tests: the real app and CLI against a real MariaDB, one fresh database per
 * suite. The swagger plugin runs here as in `nest build`, so the OpenAPI document under test
 * is the one production serves.
 */
const path = require('node:path');
const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('../tsconfig.json');
const { suiteGroup } = require('./support/suite-groups');

module.exports = {
  rootDir: path.join(__dirname, '..'),
  roots: ['<rootDir>/test'],
  testRegex: '\\.e2e-spec\\.ts$',
  // All of them, or one group of them (E2E_GROUP, test/support/suite-groups.js).
  ...suiteGroup(),
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.m?js$': ['babel-jest', require('./support/esm-to-cjs.babel.js')],
    '^.+\\.ts$': [
      'ts-jest',
      {
        astTransformers: { before: ['<rootDir>/test/support/swagger-transformer.js'] },
      },
    ],
  },
  // Nest 12 and a few of its dependencies are ESM-only: compile them to CommonJS for Jest.
  transformIgnorePatterns: [
    '/node_modules/(?!(@nestjs|file-type|strtok3|token-types|peek-readable|@tokenizer|uint8array-extras)/)',
  ],
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: '<rootDir>/' }),
  testEnvironment: 'node',
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  // Every response a suite receives is validated against openapi.json after each test.
  setupFilesAfterEnv: ['<rootDir>/test/support/contract-setup.ts'],
  testTimeout: 60000,
};
