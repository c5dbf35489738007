/** Every escape class of spec/faults/escape-cases.ts, and kill -9 of the supervisor, under the cgroup backend. */
import { BACKENDS } from '../helpers/backends.ts';
import { defineEscapeTests } from './escape-cases.ts';

const backend = BACKENDS.find((b) => b.name === 'cgroup');
if (backend === undefined) throw new Error('no cgroup backend');
defineEscapeTests(backend);
