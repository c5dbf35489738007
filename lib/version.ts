/** The adapter's version; a spec keeps it equal to package.json. */
export const ADAPTER_VERSION = '0.1.0';
