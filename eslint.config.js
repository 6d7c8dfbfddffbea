'use strict';
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');

module.exports = tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'proto/src/generated/**', '*.js', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // One program over every TypeScript file, tests and deploy/ included (each workspace's tsconfig covers src).
        project: ['./tsconfig.check.json'],
        tsconfigRootDir: __dirname,
      },
    },
    rules: {
      'no-console': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // The services' code (tests may use the package as they like); proto/src/ids.ts wraps its generators.
    files: ['*/src/**/*.ts'],
    ignores: ['**/*.test.ts', 'proto/src/ids.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'ulid',
              importNames: ['ulid', 'monotonicFactory'],
              message:
                "Use @vigil/proto's ulid / monotonicUlid: the package's own random source costs 16 calls to crypto per id.",
            },
          ],
        },
      ],
    },
  },
  {
    // proto's entries stay apart: the contracts (`@vigil/proto`, src/*.ts) import neither the platform glue nor the
    // shared rules; the platform (`@vigil/proto/platform`) may use the contracts, never the rules.
    files: ['proto/src/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\./platform|@vigil/proto/platform)(/|$)',
              message:
                'A contract does not depend on the runtime glue: move the piece into src/platform/ or out of it.',
            },
            {
              regex: '^(\\./rules|@vigil/proto/rules)(/|$)',
              message: 'A contract does not depend on the shared rules (src/rules/, `@vigil/proto/rules`).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['proto/src/platform/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./rules|@vigil/proto/rules)(/|$)',
              message: 'The runtime glue does not depend on the shared rules (src/rules/, `@vigil/proto/rules`).',
            },
          ],
        },
      ],
    },
  },
  {
    // The gateway's layers: a route module registers its own routes and a console page its own pages; what both do
    // is a use case (gateway/src/use-cases/, one command per file). Only the composition root (app.ts) and the
    // console's router assemble them.
    files: ['gateway/src/**/*.ts'],
    ignores: ['gateway/src/app.ts', 'gateway/src/console/console.routes.ts', '**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'ulid',
              importNames: ['ulid', 'monotonicFactory'],
              message:
                "Use @vigil/proto's ulid / monotonicUlid: the package's own random source costs 16 calls to crypto per id.",
            },
          ],
          patterns: [
            {
              regex: '\\.routes$',
              message: 'A route module is registered by app.ts only: move what it shares into gateway/src/use-cases/.',
            },
            {
              regex: '\\.pages$',
              message: 'A console page is registered by console.routes.ts only: share through gateway/src/use-cases/.',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests read untyped JSON from real HTTP, gRPC and Kafka answers and assert on its shape with expect(); typing
    // every body first would restate the schemas the assertions check. The other type-aware rules still apply.
    files: ['**/*.test.ts', '**/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  {
    // deploy/ scripts: plain CommonJS run by Node, type-checked on their own (tsconfig.deploy.json: checkJs) and
    // linted here without the type-aware rules, which would need types JSDoc does not give yet.
    files: ['deploy/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'commonjs',
      globals: require('globals').node,
    },
    rules: {
      ...tseslint.configs.disableTypeChecked.rules,
      '@typescript-eslint/no-require-imports': 'off',
      // `const crypto = require('node:crypto')` names the module as Node's global does.
      'no-redeclare': ['error', { builtinGlobals: false }],
    },
  },
  {
    // The console's browser script: plain JavaScript, linted without type information, with browser globals.
    files: ['gateway/assets/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'script',
      globals: require('globals').browser,
    },
  },
);
