/** initialize: negotiates the protocol date and describes the server. */
import { negotiateVersion, type ProtocolVersion } from '../rpc/negotiate.ts';

export interface ServerInfo {
  readonly name: string;
  readonly version: string;
}

/** The core capabilities, the same in both eras (the modern era adds extensions, see discover.ts). */
export const SERVER_CAPABILITIES = {
  tools: { listChanged: false },
  resources: { subscribe: false, listChanged: false },
} as const;

export interface InitializeResult {
  readonly protocolVersion: ProtocolVersion;
  readonly capabilities: typeof SERVER_CAPABILITIES;
  readonly serverInfo: ServerInfo;
  readonly instructions: string;
}

export const SERVER_INSTRUCTIONS =
  'Runs the Claude Code CLI (`claude -p`) as supervised, bounded runs. Discover the tools with tools/list and the ' +
  'work snapshot with resources/list. isError: true marks a failed operation; the result object is in ' +
  'structuredContent.result, and also as JSON after the first line of the text content.';

/**
 * A malformed or unsupported protocolVersion is not an error: it negotiates to the newest legacy date.
 * A modern date is never agreed to here: the handshake belongs to the legacy era.
 */
export function initialize(params: Record<string, unknown>, serverInfo: ServerInfo): InitializeResult {
  return {
    protocolVersion: negotiateVersion(params['protocolVersion']),
    capabilities: { tools: { ...SERVER_CAPABILITIES.tools }, resources: { ...SERVER_CAPABILITIES.resources } },
    serverInfo: { name: serverInfo.name, version: serverInfo.version },
    instructions: SERVER_INSTRUCTIONS,
  };
}
