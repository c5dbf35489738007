/** Every escape class of spec/faults/escape-cases.ts, and kill -9 of the supervisor, under the process_scan backend. */
import { BACKENDS } from '../helpers/backends.ts';
import { defineEscapeTests } from './escape-cases.ts';

const backend = BACKENDS.find((b) => b.name === 'process_scan');
if (backend === undefined) throw new Error('no process_scan backend');
defineEscapeTests(backend);
