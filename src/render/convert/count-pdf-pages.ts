/**
 * The page count of a PDF by pdf-lib. A module of its own, imported on first use (pdf-lib takes
 * about 0.2 s to load): a static import here lets the bundler give pdf-lib's CommonJS exports
 * their names (a dynamic `import("pdf-lib")` in the bundle yields only a default export).
 */
import { PDFDocument } from "pdf-lib";

export async function countPdfPages(pdf: Uint8Array): Promise<number> {
  return (await PDFDocument.load(pdf, { ignoreEncryption: true, updateMetadata: false })).getPageCount();
}
