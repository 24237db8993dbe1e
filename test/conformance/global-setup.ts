/**
 * Global setup of the vitest 'conformance' project. Placeholder: installing the pinned droid with
 * the managed installer and exporting ONE_WORKS_TEST_DROID is added by the installer work.
 */
export default async function setup(): Promise<void> {}
