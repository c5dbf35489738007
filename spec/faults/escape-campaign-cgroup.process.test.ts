/** The seeded escape campaign of spec/faults/escape-cases.ts under the cgroup backend. */
import { BACKENDS } from '../helpers/backends.ts';
import { defineEscapeCampaign } from './escape-cases.ts';

const backend = BACKENDS.find((b) => b.name === 'cgroup');
if (backend === undefined) throw new Error('no cgroup backend');
defineEscapeCampaign(backend);
