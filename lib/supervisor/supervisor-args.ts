/**
 * What a supervisor learns from its command line (both sides read this one definition): the adapter appends
 * SUPERVISOR_PS_SCAN_ARG when its cleanup backend is `ps_scan`; the supervisor then follows its run through the
 * system `ps` (lib/supervisor/child/ps-tracker.ts) and opens no file of /proc for tracking or cleanup.
 */
export const SUPERVISOR_PS_SCAN_ARG = '--cleanup=ps_scan';
