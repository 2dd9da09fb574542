/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__tests__'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  testTimeout: 20000,
  // .ts before .mjs: a fixture's TypeScript driver and its ESM child script share a name (authorization-server).
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json', 'node'],
};
