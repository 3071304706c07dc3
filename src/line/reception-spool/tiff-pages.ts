/**
 * The pages of a TIFF that SpanDSP is writing or wrote while receiving: how many are whole on
 * disk, and a copy that ends after the first N of them. No libtiff here: only the header, the
 * chain of image file directories (IFDs) and each page's strips are read, with positioned reads,
 * so that checking the newest page of a long fax costs a few small reads, not the whole file.
 *
 * How SpanDSP (libtiff) writes a received page, at its end (before the MCF): the strips, then the
 * page's IFD, appended to the file, then the previous IFD's "next" offset (or the header's first
 * one) pointed at it. A file cut anywhere in that (a killed process, a full disk) has its earlier
 * pages intact; only the chain's last link may point at a half-written page, which
 * `keepFirstPages` cuts off.
 */
import type { FileHandle } from "node:fs/promises";

/** What the walk found: the pages whose IFD and strips lie wholly within the file. */
export interface WholePages {
  pages: number;
  /** Why the walk stopped before `upTo` pages; null when it found them all (or the chain ended). */
  stoppedBecause: string | null;
  /** Offset of each whole page's IFD. */
  ifdOffsets: number[];
  littleEndian: boolean;
}

interface Source {
  size: number;
  read(offset: number, length: number): Promise<Buffer | null>;
}

function bufferSource(data: Uint8Array): Source {
  const buffer = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return {
    size: buffer.length,
    read: async (offset, length) => (offset + length <= buffer.length && offset >= 0 ? buffer.subarray(offset, offset + length) : null),
  };
}

async function fileSource(handle: FileHandle): Promise<Source> {
  const { size } = await handle.stat();
  return {
    size,
    read: async (offset, length) => {
      if (offset < 0 || offset + length > size) return null;
      const out = Buffer.alloc(length);
      const { bytesRead } = await handle.read(out, 0, length, offset);
      return bytesRead === length ? out : null;
    },
  };
}

const TYPE_SIZES: Record<number, number> = { 3: 2, 4: 4 }; // SHORT, LONG
const STRIP_OFFSETS = 273;
const STRIP_BYTE_COUNTS = 279;

/** Counts the pages (up to `upTo`) whose directory and image data are wholly in the file. */
export async function wholePagesOfFile(handle: FileHandle, upTo = Number.MAX_SAFE_INTEGER): Promise<WholePages> {
  return walk(await fileSource(handle), upTo);
}

/** The same for a file's bytes. */
export async function wholePages(data: Uint8Array, upTo = Number.MAX_SAFE_INTEGER): Promise<WholePages> {
  return walk(bufferSource(data), upTo);
}

async function walk(source: Source, upTo: number): Promise<WholePages> {
  const result: WholePages = { pages: 0, stoppedBecause: null, ifdOffsets: [], littleEndian: true };
  const header = await source.read(0, 8);
  if (header === null) return { ...result, stoppedBecause: "no TIFF header yet" };
  const order = header.toString("latin1", 0, 2);
  if (order !== "II" && order !== "MM") return { ...result, stoppedBecause: "not a TIFF file" };
  const le = order === "II";
  result.littleEndian = le;
  const u16 = (b: Buffer, at: number): number => (le ? b.readUInt16LE(at) : b.readUInt16BE(at));
  const u32 = (b: Buffer, at: number): number => (le ? b.readUInt32LE(at) : b.readUInt32BE(at));
  if (u16(header, 2) !== 42) return { ...result, stoppedBecause: "not a classic TIFF file" };
  let next = u32(header, 4);
  const seen = new Set<number>();
  while (next !== 0 && result.pages < upTo) {
    if (seen.has(next)) return { ...result, stoppedBecause: "the directory chain loops" };
    seen.add(next);
    const countBytes = await source.read(next, 2);
    if (countBytes === null) return { ...result, stoppedBecause: `page ${result.pages + 1}'s directory lies beyond the file's end` };
    const count = u16(countBytes, 0);
    const ifd = await source.read(next + 2, count * 12 + 4);
    if (ifd === null) return { ...result, stoppedBecause: `page ${result.pages + 1}'s directory is cut off` };
    const values = async (tag: number): Promise<number[] | null> => {
      for (let i = 0; i < count; i++) {
        const at = i * 12;
        if (u16(ifd, at) !== tag) continue;
        const type = u16(ifd, at + 2);
        const n = u32(ifd, at + 4);
        const size = TYPE_SIZES[type];
        if (size === undefined || n === 0 || n > 1_000_000) return null;
        const data = n * size <= 4 ? ifd.subarray(at + 8, at + 12) : await source.read(u32(ifd, at + 8), n * size);
        if (data === null) return null;
        return Array.from({ length: n }, (_, k) => (size === 2 ? u16(data, k * 2) : u32(data, k * 4)));
      }
      return null;
    };
    const offsets = await values(STRIP_OFFSETS);
    const counts = await values(STRIP_BYTE_COUNTS);
    if (offsets === null || counts === null || offsets.length !== counts.length) return { ...result, stoppedBecause: `page ${result.pages + 1}'s directory names no whole strips` };
    if (offsets.some((o, k) => o + counts[k]! > source.size)) return { ...result, stoppedBecause: `page ${result.pages + 1}'s image data is cut off` };
    result.ifdOffsets.push(next);
    result.pages++;
    next = u32(ifd, count * 12);
  }
  return result;
}

/**
 * A copy of `data` that holds its first `pages` pages: the `pages`-th directory's next offset
 * set to 0, so that whatever follows (a page SpanDSP had begun to write, or one not confirmed)
 * is no page of it. Throws when the file has fewer whole pages.
 */
export async function keepFirstPages(data: Uint8Array, pages: number): Promise<Buffer> {
  if (!Number.isInteger(pages) || pages < 1) throw new RangeError(`keepFirstPages: pages must be >= 1, got ${pages}`);
  const found = await wholePages(data, pages);
  if (found.pages < pages) throw new Error(`the received image holds ${found.pages} whole page${found.pages === 1 ? "" : "s"}, not ${pages}: ${found.stoppedBecause ?? "its chain ends"}`);
  const copy = Buffer.from(data);
  const last = found.ifdOffsets[pages - 1]!;
  const count = found.littleEndian ? copy.readUInt16LE(last) : copy.readUInt16BE(last);
  const at = last + 2 + count * 12;
  if (found.littleEndian) copy.writeUInt32LE(0, at);
  else copy.writeUInt32BE(0, at);
  return copy;
}
