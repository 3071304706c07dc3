/**
 * The WebAssembly PDFium engine (pdfium-engine.ts): @hyzyla/pdfium, PDFium compiled to
 * WebAssembly, BSD-licensed, no subprocess and no system package; the engine wherever the native
 * one cannot load. Each thread loads its own module instance.
 *
 * The package's high-level wrapper is not used: it always renders upright, cannot read a page's
 * size without loading the page, closes pages inside `render()`, and turns PDFium's error codes
 * into English strings. The few C functions needed are called on the WebAssembly module that
 * the package exports (`PDFiumModule`), through the typed subset `PdfiumApi` below.
 */
import { PDFiumModule } from "@hyzyla/pdfium";
import type { DrawBox, PageBuffer, PdfiumEngine } from "./pdfium-types.ts";

/** The PDFium C functions used here, as the Emscripten module exports them (pointers are numbers). */
interface PdfiumApi {
  _FPDF_InitLibraryWithConfig(config: number): void;
  _FPDF_LoadMemDocument(data: number, size: number, password: number): number;
  _FPDF_GetLastError(): number;
  _FPDF_CloseDocument(document: number): void;
  _FPDF_GetPageCount(document: number): number;
  _FPDF_GetPageSizeByIndexF(document: number, index: number, size: number): number;
  _FPDF_LoadPage(document: number, index: number): number;
  _FPDF_ClosePage(page: number): void;
  _FPDFBitmap_CreateEx(width: number, height: number, format: number, buffer: number, stride: number): number;
  _FPDFBitmap_FillRect(bitmap: number, left: number, top: number, width: number, height: number, color: number): void;
  _FPDFBitmap_Destroy(bitmap: number): void;
  _FPDF_RenderPageBitmap(bitmap: number, page: number, x: number, y: number, width: number, height: number, rotate: number, flags: number): void;
  _FPDFDOC_InitFormFillEnvironment(document: number, formInfo: number): number;
  _FPDFDOC_ExitFormFillEnvironment(form: number): void;
  _FORM_OnAfterLoadPage(page: number, form: number): void;
  _FORM_OnBeforeClosePage(page: number, form: number): void;
  _FPDF_FFLDraw(form: number, bitmap: number, page: number, x: number, y: number, width: number, height: number, rotate: number, flags: number): void;
  wasmExports: { malloc(size: number): number; free(pointer: number): void };
  HEAPU8: Uint8Array;
}

const FPDFBITMAP_GRAY = 1;
const WHITE = 0xffffffff;
/** FPDF_FORMFILLINFO: version 1 (no XFA), every callback null; 256 bytes covers the struct (32-bit pointers). */
const FORM_FILL_INFO_BYTES = 256;

interface OpenPdf {
  document: number;
  /** The file's bytes in WebAssembly memory: PDFium reads them until the document is closed. */
  bytes: number;
  /** The form-fill environment, made on the first page drawn. */
  form: number;
  formInfo: number;
}

/** Loads and initialises a PDFium module instance for this thread. */
export async function loadWasmPdfium(): Promise<PdfiumEngine> {
  const api = (await PDFiumModule({})) as unknown as PdfiumApi;
  for (const name of ["_FPDF_GetPageSizeByIndexF", "_FPDF_FFLDraw", "_FPDF_RenderPageBitmap", "_FPDFDOC_InitFormFillEnvironment"] as const) {
    if (typeof api[name] !== "function") throw new Error(`@hyzyla/pdfium does not export ${name}`);
  }
  api._FPDF_InitLibraryWithConfig(0);
  const documents = new Map<number, OpenPdf>();
  let nextId = 0;
  const open = (id: number): OpenPdf => {
    const pdf = documents.get(id);
    if (pdf === undefined) throw new Error(`no open PDF document ${id}`);
    return pdf;
  };
  const malloc = (bytes: number, what: string): number => {
    const pointer = api.wasmExports.malloc(bytes);
    if (pointer === 0) throw new Error(`PDFium cannot allocate ${bytes} bytes for ${what}`);
    return pointer;
  };

  /** The form-fill environment of the document (made once); 0 if PDFium cannot make one. */
  const formOf = (pdf: OpenPdf): number => {
    if (pdf.form !== 0 || pdf.formInfo !== 0) return pdf.form;
    pdf.formInfo = api.wasmExports.malloc(FORM_FILL_INFO_BYTES);
    if (pdf.formInfo === 0) return 0;
    api.HEAPU8.fill(0, pdf.formInfo, pdf.formInfo + FORM_FILL_INFO_BYTES);
    new DataView(api.HEAPU8.buffer).setUint32(pdf.formInfo, 1, true);
    pdf.form = api._FPDFDOC_InitFormFillEnvironment(pdf.document, pdf.formInfo);
    return pdf.form;
  };

  return {
    kind: "wasm",
    openDocument(bytes) {
      const copy = malloc(Math.max(1, bytes.length), "a PDF document");
      api.HEAPU8.set(bytes, copy);
      const document = api._FPDF_LoadMemDocument(copy, bytes.length, 0);
      if (document === 0) {
        const error = api._FPDF_GetLastError();
        api.wasmExports.free(copy);
        return error > 0 ? -error : -1;
      }
      documents.set(++nextId, { document, bytes: copy, form: 0, formInfo: 0 });
      return nextId;
    },
    closeDocument(id) {
      const pdf = open(id);
      documents.delete(id);
      if (pdf.form !== 0) api._FPDFDOC_ExitFormFillEnvironment(pdf.form);
      if (pdf.formInfo !== 0) api.wasmExports.free(pdf.formInfo);
      api._FPDF_CloseDocument(pdf.document);
      api.wasmExports.free(pdf.bytes);
    },
    pageCount: (id) => api._FPDF_GetPageCount(open(id).document),
    pageSize(id, index) {
      const size = malloc(8, "a page size");
      try {
        if (api._FPDF_GetPageSizeByIndexF(open(id).document, index, size) === 0) return null;
        const view = new DataView(api.HEAPU8.buffer, size, 8);
        return { width: view.getFloat32(0, true), height: view.getFloat32(4, true) };
      } finally {
        api.wasmExports.free(size);
      }
    },
    allocatePage(widthPx, heightPx): PageBuffer {
      const pointer = malloc(widthPx * heightPx, `a ${widthPx}x${heightPx} page bitmap`);
      let freed = false;
      return {
        // Taken anew each time: PDFium may have grown its memory, which replaces HEAPU8.
        view: () => api.HEAPU8.subarray(pointer, pointer + widthPx * heightPx),
        free() {
          if (freed) return;
          freed = true;
          api.wasmExports.free(pointer);
        },
      };
    },
    renderPage(id, index, buffer, widthPx, heightPx, box: DrawBox, flags) {
      const pdf = open(id);
      const page = api._FPDF_LoadPage(pdf.document, index);
      if (page === 0) {
        const error = api._FPDF_GetLastError();
        return error > 0 ? -error : -1;
      }
      let bitmap = 0;
      try {
        bitmap = api._FPDFBitmap_CreateEx(widthPx, heightPx, FPDFBITMAP_GRAY, buffer.view().byteOffset, widthPx);
        if (bitmap === 0) throw new Error(`PDFium cannot make a ${widthPx}x${heightPx} page bitmap`);
        api._FPDFBitmap_FillRect(bitmap, 0, 0, widthPx, heightPx, WHITE);
        const { left, top, width, height, rotate } = box;
        api._FPDF_RenderPageBitmap(bitmap, page, left, top, width, height, rotate, flags);
        const form = formOf(pdf);
        if (form !== 0) {
          api._FORM_OnAfterLoadPage(page, form);
          api._FPDF_FFLDraw(form, bitmap, page, left, top, width, height, rotate, 0);
          api._FORM_OnBeforeClosePage(page, form);
        }
        return 0;
      } finally {
        if (bitmap !== 0) api._FPDFBitmap_Destroy(bitmap);
        api._FPDF_ClosePage(page);
      }
    },
  };
}
