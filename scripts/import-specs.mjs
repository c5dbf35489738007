// Imports every spec file named in argv into this one process, so node:test runs them all here: one tsx
// start instead of one per file. Only for the unit tier (scripts/run-specs.mjs --unit), whose files share
// no process-wide state; a failing test sets the exit code as under --test.
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

for (const file of process.argv.slice(2)) await import(pathToFileURL(resolve(file)).href);
