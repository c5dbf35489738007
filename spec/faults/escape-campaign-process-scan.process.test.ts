/** The seeded escape campaign of spec/faults/escape-cases.ts under the process_scan backend. */
import { BACKENDS } from '../helpers/backends.ts';
import { defineEscapeCampaign } from './escape-cases.ts';

const backend = BACKENDS.find((b) => b.name === 'process_scan');
if (backend === undefined) throw new Error('no process_scan backend');
defineEscapeCampaign(backend);
