/** Every escape class of spec/faults/escape-cases.ts, and kill -9 of the supervisor, under the portable ps_scan backend. */
import { PS_SCAN_BACKEND } from '../helpers/backends.ts';
import { defineEscapeTests } from './escape-cases.ts';

defineEscapeTests(PS_SCAN_BACKEND);
