// Drivers of docs/migration.md's code blocks (see __tests__/fixtures/doc-run.ts): the "after" side of a migration,
// type-checked as a strict consumer compiles it (the "before" side is another library's code, shown, not checked).
import { excerpt, type DocDrivers } from '../fixtures/doc-run';

export const drivers: DocDrivers = {
  'migration-requirements': excerpt(),
};
