import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeFrame, oversizeFrameResponse } from '../../lib/rpc/frame.ts';
import { RPC_ERROR_CODES, rpcErrors } from '../../lib/rpc/errors.ts';

describe('decodeFrame', () => {
  it('parses JSON', () => {
    assert.deepEqual(decodeFrame(Buffer.from('{"a":"é"}')), { kind: 'message', value: { a: 'é' } });
  });
  it('answers bad JSON with -32700 and id null', () => {
    assert.deepEqual(decodeFrame(Buffer.from('{"a":')), {
      kind: 'error',
      response: { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
    });
  });
  it('answers invalid UTF-8 with -32700 instead of decoding replacement characters', () => {
    const bytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const decoded = decodeFrame(bytes);
    assert.equal(decoded.kind, 'error');
    if (decoded.kind === 'error') assert.equal(decoded.response.error.code, RPC_ERROR_CODES.PARSE_ERROR);
  });
  it('skips blank frames', () => {
    assert.deepEqual(decodeFrame(Buffer.from('')), { kind: 'blank' });
    assert.deepEqual(decodeFrame(Buffer.from(' \t\r')), { kind: 'blank' });
  });
  it('oversize frames get -32600 with the bound in data', () => {
    assert.deepEqual(oversizeFrameResponse(1024), {
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'Invalid Request: frame exceeds 1024 bytes',
        data: { code: 'frame_too_large', max_frame_bytes: 1024 },
      },
    });
  });
});

describe('rpcErrors', () => {
  it('every constructor yields a code from the table and a message without stack or path', () => {
    const codes = new Set<number>(Object.values(RPC_ERROR_CODES));
    const built = [
      rpcErrors.parseError(),
      rpcErrors.invalidUtf8(),
      rpcErrors.invalidRequest(),
      rpcErrors.emptyBatch(),
      rpcErrors.batchNotSupported(),
      rpcErrors.frameTooLarge(10),
      rpcErrors.duplicateId(),
      rpcErrors.alreadyInitialized(),
      rpcErrors.methodNotFound(),
      rpcErrors.invalidParams('x', '/x'),
      rpcErrors.unknownTool(),
      rpcErrors.internal(),
      rpcErrors.notInitialized(),
      rpcErrors.closing(),
      rpcErrors.resourceNotFound(),
      rpcErrors.resourceUnavailable('busy', 'Busy.'),
    ];
    for (const error of built) {
      assert.ok(codes.has(error.code));
      const wire = JSON.stringify(error.toObject());
      assert.ok(!wire.includes(' at ') && !wire.includes('.ts'), wire);
    }
    assert.deepEqual(rpcErrors.invalidParams('x').toObject(), { code: -32602, message: 'Invalid params: x' });
    assert.deepEqual(rpcErrors.invalidParams('x', '/a').toObject(), { code: -32602, message: 'Invalid params: x', data: { path: '/a' } });
  });
});
