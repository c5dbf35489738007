#!/usr/bin/env node
// A second floor for the cold-start benchmark (dev-only): the least a Node stdio server can do, answering
// the first line it reads with a fixed JSON-RPC result through process.stdin and process.stdout (which,
// on pipes, load Node's net and stream modules). CommonJS, like the bundle.
'use strict';
process.stdin.once('data', () => {
  process.stdout.write('{"jsonrpc":"2.0","id":1,"result":{}}\n');
});
