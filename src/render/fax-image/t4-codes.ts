/**
 * The code words of ITU-T T.4: Modified Huffman run-length codes (tables 2 and 3: terminating
 * codes for runs 0–63, make-up codes for multiples of 64, the extended make-up codes 1792–2560
 * common to both colours) and the two-dimensional mode codes (table 4), which T.6 (MMR, "G4")
 * uses unchanged. Each code is its bits as a string, most significant first, so that the tables
 * read as the recommendation prints them; they are turned into numbers once at load.
 */

export interface Code {
  /** The code's bits, right-aligned. */
  bits: number;
  /** Its length in bits. */
  length: number;
}

const WHITE_TERMINATING_TEXT = [
  "00110101", "000111", "0111", "1000", "1011", "1100", "1110", "1111",
  "10011", "10100", "00111", "01000", "001000", "000011", "110100", "110101",
  "101010", "101011", "0100111", "0001100", "0001000", "0010111", "0000011", "0000100",
  "0101000", "0101011", "0010011", "0100100", "0011000", "00000010", "00000011", "00011010",
  "00011011", "00010010", "00010011", "00010100", "00010101", "00010110", "00010111", "00101000",
  "00101001", "00101010", "00101011", "00101100", "00101101", "00000100", "00000101", "00001010",
  "00001011", "01010010", "01010011", "01010100", "01010101", "00100100", "00100101", "01011000",
  "01011001", "01011010", "01011011", "01001010", "01001011", "00110010", "00110011", "00110100",
];
const BLACK_TERMINATING_TEXT = [
  "0000110111", "010", "11", "10", "011", "0011", "0010", "00011",
  "000101", "000100", "0000100", "0000101", "0000111", "00000100", "00000111", "000011000",
  "0000010111", "0000011000", "0000001000", "00001100111", "00001101000", "00001101100", "00000110111", "00000101000",
  "00000010111", "00000011000", "000011001010", "000011001011", "000011001100", "000011001101", "000001101000", "000001101001",
  "000001101010", "000001101011", "000011010010", "000011010011", "000011010100", "000011010101", "000011010110", "000011010111",
  "000001101100", "000001101101", "000011011010", "000011011011", "000001010100", "000001010101", "000001010110", "000001010111",
  "000001100100", "000001100101", "000001010010", "000001010011", "000000100100", "000000110111", "000000111000", "000000100111",
  "000000101000", "000001011000", "000001011001", "000000101011", "000000101100", "000001011010", "000001100110", "000001100111",
];
/** Make-up codes for 64, 128, … 1728 pixels. */
const WHITE_MAKEUP_TEXT = [
  "11011", "10010", "010111", "0110111", "00110110", "00110111", "01100100", "01100101", "01101000",
  "01100111", "011001100", "011001101", "011010010", "011010011", "011010100", "011010101", "011010110", "011010111",
  "011011000", "011011001", "011011010", "011011011", "010011000", "010011001", "010011010", "011000", "010011011",
];
const BLACK_MAKEUP_TEXT = [
  "0000001111", "000011001000", "000011001001", "000001011011", "000000110011", "000000110100", "000000110101", "0000001101100", "0000001101101",
  "0000001001010", "0000001001011", "0000001001100", "0000001001101", "0000001110010", "0000001110011", "0000001110100", "0000001110101", "0000001110110",
  "0000001110111", "0000001010010", "0000001010011", "0000001010100", "0000001010101", "0000001011010", "0000001011011", "0000001100100", "0000001100101",
];
/** Extended make-up codes for 1792, 1856, … 2560 pixels, the same for both colours. */
const EXTENDED_MAKEUP_TEXT = [
  "00000001000", "00000001100", "00000001101", "000000010010", "000000010011", "000000010100", "000000010101",
  "000000010110", "000000010111", "000000011100", "000000011101", "000000011110", "000000011111",
];

const code = (text: string): Code => ({ bits: parseInt(text, 2), length: text.length });

/** The longest run one make-up code covers; longer runs repeat it (T.4 4.1.1.1). */
export const MAX_MAKEUP_RUN = 2560;

/** Run-length codes of one colour: `terminating[run]` for 0–63, `makeup[k]` for a run of 64·k (k = 1–40). */
export interface RunCodes {
  terminating: readonly Code[];
  makeup: readonly Code[];
}

function runCodes(terminating: string[], makeup: string[]): RunCodes {
  return {
    terminating: terminating.map(code),
    makeup: [{ bits: 0, length: 0 }, ...makeup.map(code), ...EXTENDED_MAKEUP_TEXT.map(code)],
  };
}

export const WHITE_RUN_CODES = runCodes(WHITE_TERMINATING_TEXT, WHITE_MAKEUP_TEXT);
export const BLACK_RUN_CODES = runCodes(BLACK_TERMINATING_TEXT, BLACK_MAKEUP_TEXT);

/** Bits of the Modified Huffman code of one run of `run` pixels (make-ups, then a terminating code). */
export function runCodeBits(run: number, codes: RunCodes): number {
  let bits = 0;
  while (run > MAX_MAKEUP_RUN) {
    bits += codes.makeup[MAX_MAKEUP_RUN >> 6]!.length;
    run -= MAX_MAKEUP_RUN;
  }
  if (run >= 64) bits += codes.makeup[run >> 6]!.length;
  return bits + codes.terminating[run & 63]!.length;
}

/** T.4 table 4: the two-dimensional coding modes. */
export const PASS = code("0001");
export const HORIZONTAL = code("001");
/** Vertical mode codes by a1 − b1, from −3 (VL3) to +3 (VR3): index a1 − b1 + 3. */
export const VERTICAL: readonly Code[] = ["0000010", "000010", "010", "1", "011", "000011", "0000011"].map(code);
/** End of line: eleven zeros and a one. T.6 ends a page with two of them (EOFB). */
export const EOL = code("000000000001");

/**
 * The codes above as one table for the native G4 encoder (native-raster.ts): `(bits << 8) | length`
 * for white terminating 0–63, white make-up 0–40, black terminating, black make-up, PASS,
 * HORIZONTAL, VERTICAL (VL3 … VR3), EOL; 220 entries.
 */
export function g4CodeTable(): Uint32Array {
  const codes = [
    ...WHITE_RUN_CODES.terminating,
    ...WHITE_RUN_CODES.makeup,
    ...BLACK_RUN_CODES.terminating,
    ...BLACK_RUN_CODES.makeup,
    PASS,
    HORIZONTAL,
    ...VERTICAL,
    EOL,
  ];
  return Uint32Array.from(codes, (c) => (c.bits << 8) | c.length);
}
