/** The seeded escape campaign of spec/faults/escape-cases.ts under the portable ps_scan backend. */
import { PS_SCAN_BACKEND } from '../helpers/backends.ts';
import { defineEscapeCampaign } from './escape-cases.ts';

defineEscapeCampaign(PS_SCAN_BACKEND);
