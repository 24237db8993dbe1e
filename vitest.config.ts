import { defineConfig } from 'vitest/config';

// Two projects: fast unit/fake-peer tests, and conformance tests that drive the real droid CLI
// (installed by our own managed installer) against a scripted model server on 127.0.0.1.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/conformance/**', 'node_modules/**'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'conformance',
          include: ['test/conformance/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 600_000,
          fileParallelism: false,
          globalSetup: ['test/conformance/global-setup.ts'],
        },
      },
    ],
  },
});
