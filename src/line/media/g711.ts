/**
 * G.711 companding (ITU-T G.711): 16-bit linear PCM to and from 8-bit A-law (PCMA, RTP payload
 * type 8) and µ-law (PCMU, payload type 0). Pure. Both directions go through tables built once:
 * 256 entries to decode, 65 536 to encode (one per 16-bit sample), so a 20 ms frame is 160 lookups.
 *
 * The encoders follow the reference algorithm of ITU-T G.191 (g711.c): A-law works on the 13
 * most significant bits with even-bit inversion (XOR 0x55), µ-law on 14 bits with a bias of 33
 * and all bits inverted. Decoding returns the centre of each quantisation interval, scaled to
 * 16 bits, so encode(decode(x)) === x for every code.
 */
import type { AudioCodec } from "../sip/sdp.ts";

function alawEncodeSample(pcm: number): number {
  // 13-bit magnitude, sign in the top bit of the code (1 = positive, before the 0x55 inversion).
  let sample = pcm >> 3;
  let mask: number;
  if (sample >= 0) {
    mask = 0xd5;
  } else {
    mask = 0x55;
    sample = -sample - 1;
  }
  const segmentEnds = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff];
  let segment = 0;
  while (segment < 8 && sample > segmentEnds[segment]!) segment++;
  if (segment >= 8) return 0x7f ^ mask;
  let code = segment << 4;
  code |= segment < 2 ? (sample >> 1) & 0x0f : (sample >> segment) & 0x0f;
  return code ^ mask;
}

function alawDecodeSample(code: number): number {
  const a = code ^ 0x55;
  let t = (a & 0x0f) << 4;
  const segment = (a & 0x70) >> 4;
  if (segment === 0) t += 8;
  else if (segment === 1) t += 0x108;
  else t = (t + 0x108) << (segment - 1);
  return a & 0x80 ? t : -t;
}

const ULAW_BIAS = 0x84;
const ULAW_CLIP = 32_635;

function ulawEncodeSample(pcm: number): number {
  let sample = pcm;
  const sign = sample < 0 ? 0x80 : 0;
  if (sign) sample = -sample;
  if (sample > ULAW_CLIP) sample = ULAW_CLIP;
  sample += ULAW_BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (sample & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (sample >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

function ulawDecodeSample(code: number): number {
  const u = ~code & 0xff;
  const exponent = (u >> 4) & 0x07;
  const mantissa = u & 0x0f;
  const magnitude = (((mantissa << 3) + ULAW_BIAS) << exponent) - ULAW_BIAS;
  return u & 0x80 ? -magnitude : magnitude;
}

function buildTables(encode: (pcm: number) => number, decode: (code: number) => number): { enc: Uint8Array; dec: Int16Array } {
  const enc = new Uint8Array(65_536);
  for (let i = 0; i < 65_536; i++) enc[i] = encode(i < 32_768 ? i : i - 65_536);
  const dec = new Int16Array(256);
  for (let code = 0; code < 256; code++) dec[code] = decode(code);
  return { enc, dec };
}

const TABLES: Readonly<Record<AudioCodec, { enc: Uint8Array; dec: Int16Array }>> = {
  PCMA: buildTables(alawEncodeSample, alawDecodeSample),
  PCMU: buildTables(ulawEncodeSample, ulawDecodeSample),
};

/** 16-bit linear samples to G.711 codes, one byte per sample. */
export function g711Encode(codec: AudioCodec, samples: Int16Array, out: Uint8Array = new Uint8Array(samples.length)): Uint8Array {
  const enc = TABLES[codec].enc;
  for (let i = 0; i < samples.length; i++) out[i] = enc[samples[i]! & 0xffff]!;
  return out;
}

/** G.711 codes to 16-bit linear samples. */
export function g711Decode(codec: AudioCodec, codes: Uint8Array, out: Int16Array = new Int16Array(codes.length)): Int16Array {
  const dec = TABLES[codec].dec;
  for (let i = 0; i < codes.length; i++) out[i] = dec[codes[i]!]!;
  return out;
}

/** The code for silence (0): 0xd5 in A-law, 0xff in µ-law. */
export function g711Silence(codec: AudioCodec): number {
  return TABLES[codec].enc[0]!;
}
