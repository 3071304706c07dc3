/*
 * pdfium_native: PDFium as native code for the render stage (src/render/pdfium/native-pdfium.ts
 * loads it; src/render/pdfium/wasm-pdfium.ts is the WebAssembly twin that renders the same pixels).
 *
 * The PDFium library itself is not built here: it is the prebuilt libpdfium.so of the npm package
 * pdfium-node-linux-x64-gnu (bblanchon/pdfium-binaries, chromium/7934), whose path the caller
 * gives. This addon only loads it and calls the few functions that rendering a page needs; their
 * prototypes are declared below, so no PDFium header is needed to build it.
 *
 * PDFium is not thread-safe: its fonts, caches and page data live in globals. Each thread that
 * renders (the render worker, each page helper) therefore gets a PDFium of its own, loaded from a
 * copy of the library: the first from the file itself, the others from an in-memory copy
 * (memfd_create), or a copy in `tmpDir` where memfd cannot be mapped executable. dlopen gives a
 * file that is another inode its own globals. The copies are loaded RTLD_LOCAL | RTLD_DEEPBIND, so
 * PDFium's FreeType and other symbols bind within each copy, never to another library's. A
 * thread's PDFium returns to a process-wide pool when the thread ends (its documents closed) and
 * is reused by the next thread, so that threads started and ended over days (recycled render
 * workers) never load more copies than ever ran at once. The pool lives in this addon's statics,
 * so the addon is linked `-z nodelete`: Node unloads an addon when the last thread that loaded it
 * ends (the render threads, in a node whose main thread never renders), which would lose the pool
 * while its copies stay mapped.
 *
 *   load(libraryPath, tmpDir) -> "file" | "memfd" | "copy"
 *     Takes this thread's PDFium (from the pool, or loaded); says what it was loaded from. Throws an
 *     Error naming the cause when the library cannot be loaded (the caller then uses the
 *     WebAssembly PDFium).
 *   openDocument(bytes) -> id (> 0), or -(FPDF_GetLastError()) (-1 when unknown)
 *     The bytes are copied: the caller's buffer may change afterwards.
 *   closeDocument(id)
 *   pageCount(id) -> count
 *   pageSize(id, index) -> [width, height] in points (float precision), or null
 *   renderPage(id, index, out, widthPx, heightPx, left, top, width, height, rotate, flags)
 *     -> 0 (rendered), -(FPDF_GetLastError()) when the page cannot be loaded, 1 when cancelled
 *     Renders page `index` into `out` (widthPx * heightPx bytes, 8-bit grey, stride widthPx):
 *     filled white, the page drawn into the rectangle (left, top, width, height) turned by
 *     `rotate` (0-3) with render `flags`, then the form layer (FPDF_FFLDraw, flags 0) when the
 *     document has a form-fill environment (made with the first page drawn).
 *   loadedPdfiums() -> { file, memfd, copy, inUse }
 *     How many PDFiums this process has loaded, by origin, and how many threads hold one now.
 *   setCancelFlag(flag)
 *     `flag` is an Int32Array on a SharedArrayBuffer (or null): while flag[0] is not 0, page
 *     renders of this thread stop at PDFium's next pause point and answer 1. Another thread sets it
 *     to give up a render that the thread itself, busy in native code, cannot be interrupted in.
 *
 * Errors of use (an unknown document id, a wrong argument) throw.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- PDFium's C API, as much as is used (fpdfview.h, fpdf_formfill.h, fpdf_progressive.h) ---- */
typedef void *FPDF_DOCUMENT;
typedef void *FPDF_PAGE;
typedef void *FPDF_BITMAP;
typedef void *FPDF_FORMHANDLE;
typedef struct {
  float width;
  float height;
} FS_SIZEF;
/* FPDF_LIBRARY_CONFIG, version 2. */
typedef struct {
  int version;
  const char **m_pUserFontPaths;
  void *m_pIsolate;
  unsigned int m_v8EmbedderSlot;
} FPDF_LIBRARY_CONFIG;
typedef struct IFSDK_PAUSE_ {
  int version;
  int (*NeedToPauseNow)(struct IFSDK_PAUSE_ *pause);
  void *user;
} IFSDK_PAUSE;

#define FPDFBITMAP_GRAY 1
#define FPDF_RENDER_TOBECONTINUED 1
/* FPDF_FORMFILLINFO, version 1, every callback null: zeroed bytes beyond the struct's size (about
 * 300 bytes on 64-bit platforms) with `version` (its first int) set to 1. */
#define FORM_FILL_INFO_BYTES 1024

typedef struct {
  void (*InitLibraryWithConfig)(const void *config);
  FPDF_DOCUMENT (*LoadMemDocument64)(const void *data, size_t size, const char *password);
  unsigned long (*GetLastError)(void);
  void (*CloseDocument)(FPDF_DOCUMENT document);
  int (*GetPageCount)(FPDF_DOCUMENT document);
  int (*GetPageSizeByIndexF)(FPDF_DOCUMENT document, int index, FS_SIZEF *size);
  FPDF_PAGE (*LoadPage)(FPDF_DOCUMENT document, int index);
  void (*ClosePage)(FPDF_PAGE page);
  FPDF_BITMAP (*BitmapCreateEx)(int width, int height, int format, void *first_scan, int stride);
  int (*BitmapFillRect)(FPDF_BITMAP bitmap, int left, int top, int width, int height, unsigned long color);
  void (*BitmapDestroy)(FPDF_BITMAP bitmap);
  int (*RenderPageBitmapStart)(FPDF_BITMAP bitmap, FPDF_PAGE page, int x, int y, int width, int height, int rotate, int flags, IFSDK_PAUSE *pause);
  int (*RenderPageContinue)(FPDF_PAGE page, IFSDK_PAUSE *pause);
  void (*RenderPageClose)(FPDF_PAGE page);
  FPDF_FORMHANDLE (*InitFormFillEnvironment)(FPDF_DOCUMENT document, void *form_info);
  void (*ExitFormFillEnvironment)(FPDF_FORMHANDLE form);
  void (*OnAfterLoadPage)(FPDF_PAGE page, FPDF_FORMHANDLE form);
  void (*OnBeforeClosePage)(FPDF_PAGE page, FPDF_FORMHANDLE form);
  void (*FFLDraw)(FPDF_FORMHANDLE form, FPDF_BITMAP bitmap, FPDF_PAGE page, int x, int y, int width, int height, int rotate, int flags);
} pdfium_api;

static const char *const API_NAMES[] = {
    "FPDF_InitLibraryWithConfig", "FPDF_LoadMemDocument64", "FPDF_GetLastError", "FPDF_CloseDocument",
    "FPDF_GetPageCount", "FPDF_GetPageSizeByIndexF", "FPDF_LoadPage", "FPDF_ClosePage",
    "FPDFBitmap_CreateEx", "FPDFBitmap_FillRect", "FPDFBitmap_Destroy", "FPDF_RenderPageBitmap_Start",
    "FPDF_RenderPage_Continue", "FPDF_RenderPage_Close", "FPDFDOC_InitFormFillEnvironment",
    "FPDFDOC_ExitFormFillEnvironment", "FORM_OnAfterLoadPage", "FORM_OnBeforeClosePage", "FPDF_FFLDraw",
};
#define API_COUNT (sizeof API_NAMES / sizeof API_NAMES[0])

/* ---- The process-wide pool of loaded PDFiums ---- */
typedef struct instance {
  struct instance *next;
  void *handle;
  pdfium_api api;
  int in_use;
  char path[4096];
  const char *origin;
  int memfd; /* the in-memory copy's descriptor, kept open while it is loaded; -1 */
} instance;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static instance *pool = NULL;

/* Whether an instance (free or not) was loaded from the library file itself. */
static int file_loaded(const char *path) {
  for (instance *i = pool; i != NULL; i = i->next) {
    if (strcmp(i->origin, "file") == 0 && strcmp(i->path, path) == 0) return 1;
  }
  return 0;
}

/* Copies `path` into `fd`; 0 on success. */
static int copy_into(const char *path, int fd) {
  int in = open(path, O_RDONLY | O_CLOEXEC);
  if (in < 0) return -1;
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = read(in, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      close(in);
      return -1;
    }
    for (ssize_t done = 0; done < got;) {
      ssize_t put = write(fd, buffer + done, (size_t)(got - done));
      if (put < 0) {
        if (errno == EINTR) continue;
        close(in);
        return -1;
      }
      done += put;
    }
  }
  close(in);
  return 0;
}

static void *open_library(const char *file, char *error, size_t error_size) {
  void *handle = dlopen(file, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (handle == NULL) snprintf(error, error_size, "%s", dlerror());
  return handle;
}

/*
 * A new copy of the library, loaded; NULL with `error` set when none can be made. Each copy must
 * be loaded under a name no loaded object has had: dlopen returns an object already loaded under
 * the same name without looking at the file. An in-memory copy is named by its descriptor
 * (/proc/self/fd/N), which stays open as long as the copy is loaded (*memfd_out), so no other copy
 * gets that number; a file copy is named with the process id and a counter.
 */
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

static void *load_copy(const char *path, const char *tmp_dir, const char **origin, int *memfd_out, char *error, size_t error_size) {
  static unsigned long copies = 0;
  /* Executable on purpose (Linux 6.3+ asks, and vm.memfd_noexec=1 seals it otherwise); older
   * kernels know no MFD_EXEC and refuse it with EINVAL. */
  int fd = memfd_create("faxline-pdfium", MFD_CLOEXEC | MFD_EXEC);
  if (fd < 0 && errno == EINVAL) fd = memfd_create("faxline-pdfium", MFD_CLOEXEC);
  if (fd >= 0) {
    if (copy_into(path, fd) == 0) {
      char file[64];
      snprintf(file, sizeof file, "/proc/self/fd/%d", fd);
      void *handle = open_library(file, error, error_size);
      if (handle != NULL) {
        *origin = "memfd";
        *memfd_out = fd;
        return handle;
      }
    }
    close(fd);
  }
  /* memfd missing or not executable (vm.memfd_noexec): a file in tmp_dir, removed once mapped. */
  char file[4096];
  if (snprintf(file, sizeof file, "%s/faxline-pdfium-%ld-%lu.so", tmp_dir, (long)getpid(), ++copies) >= (int)sizeof file) {
    snprintf(error, error_size, "the temporary directory's path is too long");
    return NULL;
  }
  fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
  if (fd < 0) {
    snprintf(error, error_size, "cannot make a copy of the library in %s: %s", tmp_dir, strerror(errno));
    return NULL;
  }
  int copied = copy_into(path, fd);
  int copy_errno = errno;
  close(fd);
  void *handle = copied == 0 ? open_library(file, error, error_size) : NULL;
  if (copied != 0) snprintf(error, error_size, "cannot copy the library into %s: %s", tmp_dir, strerror(copy_errno));
  unlink(file);
  if (handle != NULL) *origin = "copy";
  return handle;
}

/* Takes a free instance of `path` or loads one; NULL with `error` set when it cannot. */
static instance *acquire(const char *path, const char *tmp_dir, char *error, size_t error_size) {
  pthread_mutex_lock(&pool_lock);
  for (instance *i = pool; i != NULL; i = i->next) {
    if (!i->in_use && strcmp(i->path, path) == 0) {
      i->in_use = 1;
      pthread_mutex_unlock(&pool_lock);
      return i;
    }
  }
  instance *created = calloc(1, sizeof *created);
  if (created == NULL || strlen(path) >= sizeof created->path) {
    snprintf(error, error_size, created == NULL ? "out of memory" : "the library's path is too long");
    free(created);
    pthread_mutex_unlock(&pool_lock);
    return NULL;
  }
  const char *origin = "file";
  int memfd = -1;
  void *handle = file_loaded(path) ? load_copy(path, tmp_dir, &origin, &memfd, error, error_size) : open_library(path, error, error_size);
  if (handle != NULL) {
    void **slots = (void **)&created->api;
    for (size_t n = 0; n < API_COUNT; n++) {
      slots[n] = dlsym(handle, API_NAMES[n]);
      if (slots[n] == NULL) {
        snprintf(error, error_size, "%s has no %s", path, API_NAMES[n]);
        dlclose(handle);
        handle = NULL;
        if (memfd >= 0) close(memfd);
        break;
      }
    }
  }
  if (handle == NULL) {
    free(created);
    pthread_mutex_unlock(&pool_lock);
    return NULL;
  }
  created->handle = handle;
  created->memfd = memfd;
  created->in_use = 1;
  created->origin = origin;
  strcpy(created->path, path);
  /* No font directories: a font the PDF does not embed is replaced by PDFium's own built-in
   * fonts, as in the WebAssembly build (which sees no file system), and never by whatever fonts
   * the machine has installed: the same page on every machine. Also spares the scan of
   * /usr/share/fonts that PDFium would otherwise make on the first font it maps. */
  static const char *no_font_paths[] = {NULL};
  FPDF_LIBRARY_CONFIG config = {2, no_font_paths, NULL, 0};
  created->api.InitLibraryWithConfig(&config);
  created->next = pool;
  pool = created;
  pthread_mutex_unlock(&pool_lock);
  return created;
}

static void release(instance *i) {
  pthread_mutex_lock(&pool_lock);
  i->in_use = 0;
  pthread_mutex_unlock(&pool_lock);
}

/* ---- One thread's state: its PDFium and its open documents ---- */
typedef struct document {
  struct document *next;
  int id;
  FPDF_DOCUMENT pdf;
  void *bytes;
  FPDF_FORMHANDLE form;
  void *form_info; /* non-NULL once a form-fill environment was tried */
} document;

typedef struct {
  instance *pdfium;
  document *documents;
  int next_id;
  napi_ref cancel_ref; /* the Int32Array of setCancelFlag, kept alive */
  int32_t *cancel;
} thread_state;

static void close_document(thread_state *state, document *doc) {
  const pdfium_api *api = &state->pdfium->api;
  if (doc->form != NULL) api->ExitFormFillEnvironment(doc->form);
  free(doc->form_info);
  api->CloseDocument(doc->pdf);
  free(doc->bytes);
  free(doc);
}

static void thread_ended(napi_env env, void *data, void *hint) {
  thread_state *state = data;
  if (state->pdfium != NULL) {
    while (state->documents != NULL) {
      document *doc = state->documents;
      state->documents = doc->next;
      close_document(state, doc);
    }
    release(state->pdfium);
  }
  free(state);
}

#define CHECK(call)                                                      \
  do {                                                                   \
    if ((call) != napi_ok) {                                             \
      napi_throw_error(env, NULL, "pdfium_native: N-API call failed: " #call); \
      return NULL;                                                       \
    }                                                                    \
  } while (0)

static thread_state *state_of(napi_env env) {
  void *data = NULL;
  if (napi_get_instance_data(env, &data) != napi_ok) return NULL;
  return data;
}

/* This thread's state with its PDFium loaded; throws and gives NULL when load() was not called. */
static thread_state *loaded_state(napi_env env) {
  thread_state *state = state_of(env);
  if (state == NULL || state->pdfium == NULL) {
    napi_throw_error(env, NULL, "pdfium_native: load() was not called on this thread");
    return NULL;
  }
  return state;
}

static int int_arg(napi_env env, napi_value value, int64_t min, int64_t max, int64_t *out) {
  double number;
  if (napi_get_value_double(env, value, &number) != napi_ok) return 0;
  if (!(number >= (double)min && number <= (double)max) || number != (double)(int64_t)number) return 0;
  *out = (int64_t)number;
  return 1;
}

static document *document_arg(napi_env env, thread_state *state, napi_value value) {
  int64_t id;
  if (int_arg(env, value, 1, INT32_MAX, &id)) {
    for (document *doc = state->documents; doc != NULL; doc = doc->next) {
      if (doc->id == id) return doc;
    }
  }
  napi_throw_error(env, NULL, "pdfium_native: no such open document");
  return NULL;
}

/* A typed array argument's bytes (offset by its byteOffset) if it is of type `want`; 0 otherwise. */
static int typed_bytes(napi_env env, napi_value value, napi_typedarray_type want, void **data, size_t *length) {
  bool is_typed = false;
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset;
  if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed) return 0;
  if (napi_get_typedarray_info(env, value, &type, length, data, &buffer, &offset) != napi_ok) return 0;
  return type == want;
}

/*
 * The arguments of a call whose first one is a document id (up to `*argc` of them into `argv`),
 * this thread's state and the document; NULL with an exception pending when any is missing.
 */
static document *document_call(napi_env env, napi_callback_info info, size_t *argc, napi_value *argv, thread_state **state) {
  if (napi_get_cb_info(env, info, argc, argv, NULL, NULL) != napi_ok) {
    napi_throw_error(env, NULL, "pdfium_native: N-API call failed: napi_get_cb_info");
    return NULL;
  }
  *state = loaded_state(env);
  if (*state == NULL) return NULL;
  return document_arg(env, *state, *argc > 0 ? argv[0] : NULL);
}

static napi_value make_int(napi_env env, int64_t value) {
  napi_value result;
  if (napi_create_int64(env, value, &result) != napi_ok) return NULL;
  return result;
}

static napi_value load(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  char path[4096], tmp_dir[4096];
  size_t length;
  if (argc < 2 || napi_get_value_string_utf8(env, argv[0], path, sizeof path, &length) != napi_ok || length >= sizeof path - 1 ||
      napi_get_value_string_utf8(env, argv[1], tmp_dir, sizeof tmp_dir, &length) != napi_ok || length >= sizeof tmp_dir - 1) {
    napi_throw_type_error(env, NULL, "pdfium_native: load(libraryPath, tmpDir) takes two paths");
    return NULL;
  }
  thread_state *state = state_of(env);
  if (state == NULL) {
    state = calloc(1, sizeof *state);
    if (state == NULL) {
      napi_throw_error(env, NULL, "pdfium_native: out of memory");
      return NULL;
    }
    if (napi_set_instance_data(env, state, thread_ended, NULL) != napi_ok) {
      free(state);
      napi_throw_error(env, NULL, "pdfium_native: N-API call failed: napi_set_instance_data");
      return NULL;
    }
  }
  if (state->pdfium == NULL) {
    char error[4200] = "";
    state->pdfium = acquire(path, tmp_dir, error, sizeof error);
    if (state->pdfium == NULL) {
      char message[4400];
      snprintf(message, sizeof message, "cannot load PDFium from %s: %s", path, error);
      napi_throw_error(env, NULL, message);
      return NULL;
    }
  }
  napi_value result;
  CHECK(napi_create_string_utf8(env, state->pdfium->origin, NAPI_AUTO_LENGTH, &result));
  return result;
}

static napi_value open_document(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  thread_state *state = loaded_state(env);
  if (state == NULL) return NULL;
  size_t size = 0;
  void *data = NULL;
  if (argc < 1 || !typed_bytes(env, argv[0], napi_uint8_array, &data, &size)) {
    napi_throw_type_error(env, NULL, "pdfium_native: openDocument(bytes) takes a Uint8Array");
    return NULL;
  }
  document *doc = calloc(1, sizeof *doc);
  void *bytes = malloc(size > 0 ? size : 1);
  if (doc == NULL || bytes == NULL) {
    free(doc);
    free(bytes);
    napi_throw_error(env, NULL, "pdfium_native: out of memory for the document's bytes");
    return NULL;
  }
  memcpy(bytes, data, size);
  const pdfium_api *api = &state->pdfium->api;
  FPDF_DOCUMENT pdf = api->LoadMemDocument64(bytes, size, NULL);
  if (pdf == NULL) {
    unsigned long error = api->GetLastError();
    free(doc);
    free(bytes);
    return make_int(env, error > 0 ? -(int64_t)error : -1);
  }
  doc->pdf = pdf;
  doc->bytes = bytes;
  doc->id = ++state->next_id;
  doc->next = state->documents;
  state->documents = doc;
  return make_int(env, doc->id);
}

static napi_value close_document_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  thread_state *state;
  document *doc = document_call(env, info, &argc, argv, &state);
  if (doc == NULL) return NULL;
  for (document **link = &state->documents; *link != NULL; link = &(*link)->next) {
    if (*link == doc) {
      *link = doc->next;
      break;
    }
  }
  close_document(state, doc);
  return NULL;
}

static napi_value page_count(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  thread_state *state;
  document *doc = document_call(env, info, &argc, argv, &state);
  if (doc == NULL) return NULL;
  return make_int(env, state->pdfium->api.GetPageCount(doc->pdf));
}

static napi_value page_size(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  thread_state *state;
  document *doc = document_call(env, info, &argc, argv, &state);
  if (doc == NULL) return NULL;
  int64_t index;
  if (argc < 2 || !int_arg(env, argv[1], 0, INT32_MAX, &index)) {
    napi_throw_range_error(env, NULL, "pdfium_native: pageSize: bad page index");
    return NULL;
  }
  FS_SIZEF size = {0, 0};
  napi_value result;
  if (!state->pdfium->api.GetPageSizeByIndexF(doc->pdf, (int)index, &size)) {
    CHECK(napi_get_null(env, &result));
    return result;
  }
  napi_value width, height;
  CHECK(napi_create_array_with_length(env, 2, &result));
  CHECK(napi_create_double(env, size.width, &width));
  CHECK(napi_create_double(env, size.height, &height));
  CHECK(napi_set_element(env, result, 0, width));
  CHECK(napi_set_element(env, result, 1, height));
  return result;
}

static int need_to_pause(IFSDK_PAUSE *pause) {
  const int32_t *flag = pause->user;
  return flag != NULL && __atomic_load_n(flag, __ATOMIC_RELAXED) != 0;
}

static napi_value render_page(napi_env env, napi_callback_info info) {
  size_t argc = 11;
  napi_value argv[11];
  thread_state *state;
  document *doc = document_call(env, info, &argc, argv, &state);
  if (doc == NULL) return NULL;
  if (argc < 11) {
    napi_throw_type_error(env, NULL, "pdfium_native: renderPage takes 11 arguments");
    return NULL;
  }
  int64_t index, width_px, height_px, left, top, width, height, rotate, flags;
  /* The drawing rectangle within ±2^20 pixels: its edges (left + width) stay far inside an int. */
  if (!int_arg(env, argv[1], 0, INT32_MAX, &index) || !int_arg(env, argv[3], 1, 1 << 16, &width_px) || !int_arg(env, argv[4], 1, 1 << 16, &height_px) ||
      !int_arg(env, argv[5], -(1 << 20), 1 << 20, &left) || !int_arg(env, argv[6], -(1 << 20), 1 << 20, &top) ||
      !int_arg(env, argv[7], 0, 1 << 20, &width) || !int_arg(env, argv[8], 0, 1 << 20, &height) || !int_arg(env, argv[9], 0, 3, &rotate) ||
      !int_arg(env, argv[10], 0, INT32_MAX, &flags)) {
    napi_throw_range_error(env, NULL, "pdfium_native: renderPage: bad index, size, place, rotation or flags");
    return NULL;
  }
  size_t length = 0;
  void *pixels = NULL;
  if (!typed_bytes(env, argv[2], napi_uint8_array, &pixels, &length) || length < (size_t)(width_px * height_px)) {
    napi_throw_range_error(env, NULL, "pdfium_native: renderPage: `out` must be a Uint8Array of widthPx * heightPx bytes");
    return NULL;
  }
  const pdfium_api *api = &state->pdfium->api;
  FPDF_PAGE page = api->LoadPage(doc->pdf, (int)index);
  if (page == NULL) {
    unsigned long error = api->GetLastError();
    return make_int(env, error > 0 ? -(int64_t)error : -1);
  }
  FPDF_BITMAP bitmap = api->BitmapCreateEx((int)width_px, (int)height_px, FPDFBITMAP_GRAY, pixels, (int)width_px);
  if (bitmap == NULL) {
    api->ClosePage(page);
    napi_throw_error(env, NULL, "pdfium_native: PDFium cannot make the page bitmap");
    return NULL;
  }
  api->BitmapFillRect(bitmap, 0, 0, (int)width_px, (int)height_px, 0xffffffffUL);
  IFSDK_PAUSE pause = {1, need_to_pause, state->cancel};
  int status = api->RenderPageBitmapStart(bitmap, page, (int)left, (int)top, (int)width, (int)height, (int)rotate, (int)flags, &pause);
  while (status == FPDF_RENDER_TOBECONTINUED && !need_to_pause(&pause)) status = api->RenderPageContinue(page, &pause);
  api->RenderPageClose(page);
  int cancelled = status == FPDF_RENDER_TOBECONTINUED;
  if (!cancelled) {
    if (doc->form_info == NULL) {
      doc->form_info = calloc(1, FORM_FILL_INFO_BYTES);
      if (doc->form_info != NULL) {
        *(int *)doc->form_info = 1;
        doc->form = api->InitFormFillEnvironment(doc->pdf, doc->form_info);
      }
    }
    if (doc->form != NULL) {
      api->OnAfterLoadPage(page, doc->form);
      api->FFLDraw(doc->form, bitmap, page, (int)left, (int)top, (int)width, (int)height, (int)rotate, 0);
      api->OnBeforeClosePage(page, doc->form);
    }
  }
  api->BitmapDestroy(bitmap);
  api->ClosePage(page);
  return make_int(env, cancelled ? 1 : 0);
}

static napi_value set_cancel_flag(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  thread_state *state = loaded_state(env);
  if (state == NULL) return NULL;
  if (state->cancel_ref != NULL) {
    napi_delete_reference(env, state->cancel_ref);
    state->cancel_ref = NULL;
    state->cancel = NULL;
  }
  napi_valuetype kind;
  CHECK(napi_typeof(env, argv[0], &kind));
  if (argc < 1 || kind == napi_null || kind == napi_undefined) return NULL;
  size_t length = 0;
  void *data = NULL;
  if (!typed_bytes(env, argv[0], napi_int32_array, &data, &length) || length < 1) {
    napi_throw_type_error(env, NULL, "pdfium_native: setCancelFlag takes an Int32Array (on a SharedArrayBuffer) or null");
    return NULL;
  }
  CHECK(napi_create_reference(env, argv[0], 1, &state->cancel_ref));
  state->cancel = data;
  return NULL;
}

static napi_value loaded_pdfiums(napi_env env, napi_callback_info info) {
  int64_t file = 0, memfd = 0, copy = 0, in_use = 0;
  pthread_mutex_lock(&pool_lock);
  for (instance *i = pool; i != NULL; i = i->next) {
    if (strcmp(i->origin, "file") == 0) file++;
    else if (strcmp(i->origin, "memfd") == 0) memfd++;
    else copy++;
    in_use += i->in_use;
  }
  pthread_mutex_unlock(&pool_lock);
  napi_value result, value;
  CHECK(napi_create_object(env, &result));
  const char *names[] = {"file", "memfd", "copy", "inUse"};
  int64_t values[] = {file, memfd, copy, in_use};
  for (int n = 0; n < 4; n++) {
    CHECK(napi_create_int64(env, values[n], &value));
    CHECK(napi_set_named_property(env, result, names[n], value));
  }
  return result;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor properties[] = {
      {"load", NULL, load, NULL, NULL, NULL, napi_enumerable, NULL},
      {"openDocument", NULL, open_document, NULL, NULL, NULL, napi_enumerable, NULL},
      {"closeDocument", NULL, close_document_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pageCount", NULL, page_count, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pageSize", NULL, page_size, NULL, NULL, NULL, napi_enumerable, NULL},
      {"renderPage", NULL, render_page, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setCancelFlag", NULL, set_cancel_flag, NULL, NULL, NULL, napi_enumerable, NULL},
      {"loadedPdfiums", NULL, loaded_pdfiums, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties) != napi_ok) return NULL;
  return exports;
}
