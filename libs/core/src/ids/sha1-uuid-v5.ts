/**
 * RFC 4122 version-5 uuids computed with a SHA-1 written in JavaScript, for the hot paths that
 * mint an id per event (the segmenter: one per episode). Node's native `crypto.hash` costs a
 * couple of microseconds per call on these 40–60 byte inputs, almost all of it crossing into C++
 * and setting up a digest context; the one or two SHA-1 blocks take a fraction of that in
 * JIT-compiled code. The id is the one `uuidV5` (deterministic-id.ts) and the `uuid` package
 * return — the specs compare them on ASCII, multi-byte, lone-surrogate and multi-block names.
 */

/** Scratch space reused across calls (JavaScript is single-threaded here): message, schedule. */
let message = new Uint8Array(256);
const schedule = new Int32Array(80);
const encoder = new TextEncoder();

const DASH = 0x2d;
const HEX_DIGITS = Array.from('0123456789abcdef', (digit) => digit.charCodeAt(0));
/**
 * The 36 character codes of the id being formatted, dashes at 8, 13, 18 and 23 (a plain array of
 * small integers, which `String.fromCharCode.apply` reads fastest).
 */
const idChars: number[] = new Array<number>(36).fill(DASH);

/** A uuid v5 function for one namespace (the namespace is parsed once). */
export function uuidV5Of(namespace: string): (name: string) => string {
  const hex = namespace.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`not a uuid: ${namespace}`);
  const prefix = Uint8Array.from({ length: 16 }, (_, i) =>
    Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16),
  );
  return (name) => sha1UuidV5(prefix, name);
}

function sha1UuidV5(prefix: Uint8Array, name: string): string {
  // At most 3 UTF-8 bytes per UTF-16 code unit, plus the padding (1 + up to 63 + 8 bytes).
  const needed = prefix.length + 3 * name.length + 72;
  if (message.length < needed) message = new Uint8Array(2 * needed);
  const bytes = message;
  bytes.set(prefix, 0);
  let length = prefix.length;
  let ascii = true;
  for (let i = 0; i < name.length; i += 1) {
    const code = name.charCodeAt(i);
    if (code >= 0x80) {
      ascii = false;
      break;
    }
    bytes[length + i] = code;
  }
  // UTF-8 as Buffer.write encodes it (a lone surrogate becomes U+FFFD).
  if (ascii) length += name.length;
  else length += encoder.encodeInto(name, bytes.subarray(prefix.length)).written;

  // Padding: 0x80, zeros up to 56 mod 64, then the length in bits as a 64-bit big-endian integer.
  const total = (((length + 8) >>> 6) + 1) << 6;
  bytes[length] = 0x80;
  bytes.fill(0, length + 1, total - 5);
  const bits = length * 8;
  bytes[total - 5] = Math.floor(bits / 2 ** 32) & 0xff;
  bytes[total - 4] = (bits >>> 24) & 0xff;
  bytes[total - 3] = (bits >>> 16) & 0xff;
  bytes[total - 2] = (bits >>> 8) & 0xff;
  bytes[total - 1] = bits & 0xff;

  let h0 = 0x67452301;
  let h1 = 0xefcdab89 | 0;
  let h2 = 0x98badcfe | 0;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0 | 0;
  const w = schedule;
  for (let block = 0; block < total; block += 64) {
    for (let t = 0; t < 16; t += 1) {
      const at = block + 4 * t;
      w[t] = (bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3];
    }
    for (let t = 16; t < 80; t += 1) {
      const x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16];
      w[t] = (x << 1) | (x >>> 31);
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    // The four rounds of 20 steps, each with its function and constant (the last two constants
    // written as negative int32s: 0x8f1bbcdc and 0xca62c1d6).
    let t = 0;
    for (; t < 20; t += 1) {
      const temp = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + 0x5a827999 + w[t]) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = temp;
    }
    for (; t < 40; t += 1) {
      const temp = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0x6ed9eba1 + w[t]) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = temp;
    }
    for (; t < 60; t += 1) {
      const temp =
        (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e - 0x70e44324 + w[t]) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = temp;
    }
    for (; t < 80; t += 1) {
      const temp = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e - 0x359d3e2a + w[t]) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = temp;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
  }
  // The first 16 bytes of the digest, version 5 in the high nibble of byte 6 and the RFC 4122
  // variant in the top bits of byte 8.
  h1 = (h1 & ~0xf000) | 0x5000;
  h2 = (h2 & 0x3fffffff) | 0x80000000;
  // One flat string from the character codes: concatenating 2-digit pieces would leave a tree of
  // cons strings behind every id an open episode keeps (several hundred bytes instead of 36).
  const chars = idChars;
  hexInto(chars, 0, h0, 8);
  hexInto(chars, 9, h1 >>> 16, 4);
  hexInto(chars, 14, h1 & 0xffff, 4);
  hexInto(chars, 19, h2 >>> 16, 4);
  hexInto(chars, 24, h2 & 0xffff, 4);
  hexInto(chars, 28, h3, 8);
  return String.fromCharCode.apply(null, chars);
}

/** Writes the `digits` lowest hex digits of `value` at `chars[at…]`. */
function hexInto(chars: number[], at: number, value: number, digits: number): void {
  for (let i = digits - 1; i >= 0; i -= 1) {
    chars[at + i] = HEX_DIGITS[value & 0xf];
    value >>>= 4;
  }
}
