import { DecodeError } from '@engram/core';

/** Confluent wire format: magic byte 0, a 4-byte big-endian schema id, then Avro binary. */
export const MAGIC_BYTE = 0;
export const WIRE_HEADER_LENGTH = 5;

export interface WireFrame {
  schemaId: number;
  payload: Buffer;
}

/** Reads the frame header; anything that is not a Confluent frame is a DecodeError. */
export function readWireFrame(bytes: Buffer | null | undefined): WireFrame {
  if (!bytes || bytes.length === 0) {
    throw new DecodeError('empty message value (no Confluent wire frame)');
  }
  if (bytes.length < WIRE_HEADER_LENGTH) {
    throw new DecodeError(
      `message of ${bytes.length} bytes is shorter than the 5-byte frame header`,
    );
  }
  if (bytes[0] !== MAGIC_BYTE) {
    throw new DecodeError(`unknown magic byte ${bytes[0]} (expected ${MAGIC_BYTE})`);
  }
  return { schemaId: bytes.readUInt32BE(1), payload: bytes.subarray(WIRE_HEADER_LENGTH) };
}

export function writeWireFrame(schemaId: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(WIRE_HEADER_LENGTH);
  header.writeUInt8(MAGIC_BYTE, 0);
  header.writeUInt32BE(schemaId, 1);
  return Buffer.concat([header, payload]);
}
