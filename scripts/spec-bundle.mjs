// The runner's half of spec/helpers/bundle.ts: builds (or reuses) the spec bundle once per suite run, so every
// spec file gets its path in CLAUDE_RUN_MCP_SPEC_BUNDLE instead of building its own.
import { tsImport } from 'tsx/esm/api';

/** Returns the env entry to hand every spec process: { CLAUDE_RUN_MCP_SPEC_BUNDLE: <absolute path> }. */
export async function prepareSpecBundle() {
  const helper = await tsImport('../spec/helpers/bundle.ts', import.meta.url);
  const path = await helper.specBundle();
  return { [helper.SPEC_BUNDLE_ENV]: path };
}
