import { DecodeError } from '@engram/core';
import { describe, expect, it } from 'vitest';
import { readWireFrame, writeWireFrame } from './wire-format';

describe('readWireFrame', () => {
  it('should read back what writeWireFrame wrote', () => {
    const frame = readWireFrame(writeWireFrame(258, Buffer.from([1, 2, 3])));
    expect(frame.schemaId).toBe(258);
    expect([...frame.payload]).toEqual([1, 2, 3]);
  });

  it.each([
    ['empty', Buffer.alloc(0)],
    ['null', null],
    ['too short', Buffer.from([0, 0, 1])],
    ['wrong magic byte', Buffer.from('{"json":true}')],
  ])('should reject a %s value as a DecodeError', (_label, bytes) => {
    expect(() => readWireFrame(bytes)).toThrow(DecodeError);
  });
});
