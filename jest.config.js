/** Unit tests: *.spec.ts next to the code they test. No database. */
const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('./tsconfig.json');

module.exports = {
  rootDir: '.',
  roots: ['<rootDir>/apps', '<rootDir>/libs'],
  testRegex: '\\.spec\\.ts$',
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.m?js$': ['babel-jest', require('./test/support/esm-to-cjs.babel.js')],
    '^.+\\.ts$': ['ts-jest', { isolatedModules: true }],
  },
  // Nest 12 and a few of its dependencies are ESM-only: compile them to CommonJS for Jest.
  transformIgnorePatterns: [
    '/node_modules/(?!(@nestjs|file-type|strtok3|token-types|peek-readable|@tokenizer|uint8array-extras)/)',
  ],
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: '<rootDir>/' }),
  testEnvironment: 'node',
};
