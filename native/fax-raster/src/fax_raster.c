/*
 * fax_raster: the per-pixel loops of Faxline's render stage in C, as an N-API addon
 * (src/render/native-raster.ts loads it; each function has a TypeScript twin that gives the same
 * result, and test/unit/render-native-raster.test.ts checks that they do).
 *
 *   thresholdShaded(pixels, width, height, darkest, lightest, blackBelow, flatness, cell, flatBlack)
 *     Makes a grey page bilevel in place (encode-fax-page.ts: thresholdInPlace): lighter than
 *     `lightest` white, darker than `darkest` black; a grey in between is black below `blackBelow`
 *     unless it and its four neighbours lie within `flatness` of each other (a flat shaded area),
 *     when `flatBlack[(cellRow * cell + cellColumn) * 256 + grey]` decides (the halftone cell).
 *
 *   encodeG4(pixels, width, height, countBlackFrom, codes) -> { data, mhBits, blackPixels }
 *     T.6 (G4) encoding of a bilevel page (encode-g4-page.ts: encodeG4Page), counting the page's
 *     T.4 Modified Huffman bits and its black pixels from scan line `countBlackFrom` down.
 *     `codes` is the T.4 code table as g4CodeTable() packs it: (bits << 8) | length for white
 *     terminating 0-63, white make-up k = 0-40 (run 64 k), black terminating, black make-up,
 *     PASS, HORIZONTAL, VERTICAL -3..+3, EOL.
 *
 *   greyHistograms(pixels, width, yStart, yEnd, shift, histograms)
 *     Adds each pixel of scan lines yStart..yEnd-1 to `histograms[(x >> shift) * 256 + grey]`
 *     (one histogram per column of 2^shift pixels), except paper (255), which is not counted.
 *
 *   halftoneBlocks(pixels, out, width, height, mask, block, levels, cellLevels, cell)
 *     Screens the blocks of `block` x `block` pixels that `mask` marks (one byte per block, row by
 *     row, ceil(width / block) to a row) with a clustered-dot halftone into `out`
 *     (encode-fax-page.ts: halftonePictures): a pixel is white where `levels[grey]` lies above
 *     `cellLevels[(y % cell) * cell + x % cell]`, else black. `out` outside those blocks is untouched.
 *
 *   smoothGreys(pixels, stride, left, top, width, height, step, midMin, midMax, smoothStep, levels) -> sampled
 *     Looks at every step-th pixel of every step-th scan line of the region (place-on-page.ts:
 *     contentTone) and counts in `levels[grey]` those of mid grey (midMin..midMax) within
 *     smoothStep of their right and lower neighbours; returns how many pixels it looked at.
 *
 * No policy lives here: every threshold, table and code comes from the caller. Pure functions of
 * their arguments, no global state, so that any thread (render worker, page helper) may call them.
 *
 * Where the compiler has GCC's vector extensions (GCC and Clang: SSE2 on x86-64, NEON on arm64),
 * thresholdShaded and smoothGreys look at sixteen pixels at a time (VECTORS below); the scalar
 * loops do the tails and every pixel elsewhere, and both give the same result.
 */
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CODE_TERMINATING 64
#define CODE_MAKEUP 41
#define CODE_COLOUR (CODE_TERMINATING + CODE_MAKEUP)
#define CODE_PASS (2 * CODE_COLOUR)
#define CODE_HORIZONTAL (CODE_PASS + 1)
#define CODE_VERTICAL (CODE_PASS + 2)
#define CODE_EOL (CODE_VERTICAL + 7)
#define CODE_COUNT (CODE_EOL + 1)
#define MAX_MAKEUP_RUN 2560
#define RTC_EOLS 6

#define CHECK(call)                                                   \
  do {                                                                \
    if ((call) != napi_ok) {                                          \
      napi_throw_error(env, NULL, "fax_raster: N-API call failed: " #call); \
      return NULL;                                                    \
    }                                                                 \
  } while (0)

static napi_value throw_range(napi_env env, const char *message) {
  napi_throw_range_error(env, NULL, message);
  return NULL;
}

/* A typed array argument's bytes (already offset by its byteOffset) if it is of type `want`; 0 otherwise. */
static int typed_bytes(napi_env env, napi_value value, napi_typedarray_type want, void **data, size_t *length) {
  bool is_typed = false;
  if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed) return 0;
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset;
  if (napi_get_typedarray_info(env, value, &type, length, data, &buffer, &offset) != napi_ok) return 0;
  return type == want;
}

static int int_arg(napi_env env, napi_value value, int64_t min, int64_t max, int64_t *out) {
  double number;
  if (napi_get_value_double(env, value, &number) != napi_ok) return 0;
  if (!(number >= (double)min && number <= (double)max) || number != (double)(int64_t)number) return 0;
  *out = (int64_t)number;
  return 1;
}

#if defined(__GNUC__) || defined(__clang__)
#define VECTORS 1
/* Sixteen pixels; a comparison gives 0xff in the lanes where it holds, 0 elsewhere. */
typedef uint8_t u8x16 __attribute__((vector_size(16)));

static inline u8x16 load16(const uint8_t *p) {
  u8x16 v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline u8x16 splat16(int value) {
  return (u8x16){0} + (uint8_t)value;
}

static inline int any16(u8x16 lanes) {
  uint64_t half[2];
  memcpy(half, &lanes, sizeof half);
  return (half[0] | half[1]) != 0;
}

/* |a - b| per lane. */
static inline u8x16 absdiff16(u8x16 a, u8x16 b) {
  const u8x16 greater = (u8x16)(a > b);
  return ((a - b) & greater) | ((b - a) & ~greater);
}
#else
#define VECTORS 0
#endif

/* Eight pixels at p all equal to `same` (0x00 or 0xff). */
static inline int eight_are(const uint8_t *p, uint64_t same) {
  uint64_t word;
  memcpy(&word, p, sizeof word);
  return word == same;
}

static napi_value threshold_shaded(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value argv[9];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 9) return throw_range(env, "thresholdShaded needs 9 arguments");
  uint8_t *data;
  uint8_t *flat_black;
  size_t length, table_length;
  int64_t width, height, darkest, lightest, black_below, flatness, cell;
  if (!typed_bytes(env, argv[0], napi_uint8_array, (void **)&data, &length)) return throw_range(env, "thresholdShaded: pixels must be a Uint8Array");
  if (!int_arg(env, argv[1], 1, 1 << 20, &width) || !int_arg(env, argv[2], 1, 1 << 20, &height)) return throw_range(env, "thresholdShaded: bad page size");
  if (!int_arg(env, argv[3], 0, 255, &darkest) || !int_arg(env, argv[4], 0, 255, &lightest) || !int_arg(env, argv[5], 0, 256, &black_below) ||
      !int_arg(env, argv[6], 0, 255, &flatness) || !int_arg(env, argv[7], 1, 64, &cell))
    return throw_range(env, "thresholdShaded: bad level");
  if (!typed_bytes(env, argv[8], napi_uint8_array, (void **)&flat_black, &table_length) || table_length != (size_t)(cell * cell * 256))
    return throw_range(env, "thresholdShaded: flatBlack must be a Uint8Array of cell * cell * 256 entries");
  if ((uint64_t)width * (uint64_t)height > length) return throw_range(env, "thresholdShaded: fewer pixels than width x height");
  /* Paper and ink are skipped eight pixels at a time: they stay as they are only if 255 is paper and 0 ink. */
  const int skip = lightest < 255 && darkest > 0;

  /* Copies of the row above and of the current row, one byte of padding on each side, so that the
     sixteen-pixel steps may read a neighbour left of column 0 and right of the last column (lanes
     there are never flat: see below). */
  uint8_t *above_copy = malloc((size_t)width + 2);
  uint8_t *current_copy = malloc((size_t)width + 2);
  uint8_t *above = above_copy == NULL ? NULL : above_copy + 1;
  uint8_t *current = current_copy == NULL ? NULL : current_copy + 1;
  /* Each column's offset in a row of the flatBlack table: (x % cell) * 256, worked out once (a
     division per pixel of a photo would cost more than the rest of its test). */
  uint16_t *cell_column = malloc(sizeof(uint16_t) * (size_t)width);
  if (above_copy == NULL || current_copy == NULL || cell_column == NULL) {
    free(above_copy);
    free(current_copy);
    free(cell_column);
    napi_throw_error(env, NULL, "thresholdShaded: out of memory");
    return NULL;
  }
  above_copy[0] = above_copy[width + 1] = current_copy[0] = current_copy[width + 1] = 0;
  for (int64_t x = 0, column = 0; x < width; x++, column = column + 1 == cell ? 0 : column + 1) cell_column[x] = (uint16_t)(column * 256);
  const int64_t last_row = height - 1, last_column = width - 1;
  for (int64_t y = 0; y < height; y++) {
    uint8_t *row = data + y * width;
    uint8_t *done = above;
    above = current;
    current = done;
    memcpy(current, row, (size_t)width);
    const uint8_t *cell_row = flat_black + (y % cell) * cell * 256;
    const int inner = y > 0 && y < last_row;
    const uint8_t *below = row + width;
    int64_t x = 0;
#if VECTORS
    const u8x16 lightest16 = splat16((int)lightest), darkest16 = splat16((int)darkest), flatness16 = splat16((int)flatness);
    /* Mid greys at or above blackBelow are white; blackBelow 256 makes every mid grey black. */
    const u8x16 black_below16 = splat16(black_below > 255 ? 255 : (int)black_below);
    const int none_white = black_below > 255;
    for (; x + 16 <= width; x += 16) {
      const u8x16 v = load16(current + x);
      const u8x16 white = (u8x16)(v > lightest16);
      const u8x16 mid = ~(white | (u8x16)(v < darkest16));
      if (!any16(mid)) {
        memcpy(row + x, &white, 16); /* paper and ink: 255 and 0 */
        continue;
      }
      u8x16 out = white | (none_white ? (u8x16){0} : (mid & (u8x16)(v >= black_below16)));
      if (inner) {
        u8x16 flat = mid & (u8x16)(absdiff16(load16(current + x - 1), v) <= flatness16) & (u8x16)(absdiff16(load16(current + x + 1), v) <= flatness16) &
                     (u8x16)(absdiff16(load16(above + x), v) <= flatness16) & (u8x16)(absdiff16(load16(below + x), v) <= flatness16);
        if (any16(flat)) {
          uint8_t lanes[16], grey[16], result[16];
          memcpy(lanes, &flat, 16);
          memcpy(grey, &v, 16);
          memcpy(result, &out, 16);
          if (x == 0) lanes[0] = 0;
          if (last_column - x < 16) lanes[last_column - x] = 0;
          for (int i = 0; i < 16; i++) {
            if (lanes[i]) result[i] = cell_row[cell_column[x + i] + grey[i]] ? 0 : 255;
          }
          memcpy(&out, result, 16);
        }
      }
      memcpy(row + x, &out, 16);
    }
#endif
    for (; x < width; x++) {
      if (skip && (x & 7) == 0) {
        while (x + 8 <= width && (eight_are(row + x, UINT64_MAX) || eight_are(row + x, 0))) x += 8;
        if (x >= width) break;
      }
      const int v = current[x];
      if (v > lightest) {
        row[x] = 255;
        continue;
      }
      if (v < darkest) {
        row[x] = 0;
        continue;
      }
      /* Without branches: in a photo whether a pixel is flat is close to random, and a
         mispredicted branch per pixel cost more than the test itself. */
      int black = v < black_below;
      if (inner && x > 0 && x < last_column) {
        const int flat = (abs(current[x - 1] - v) <= flatness) & (abs(current[x + 1] - v) <= flatness) & (abs(above[x] - v) <= flatness) &
                         (abs(below[x] - v) <= flatness);
        const int shaded = cell_row[cell_column[x] + v];
        black = flat ? shaded != 0 : black;
      }
      row[x] = (uint8_t)(black - 1); /* 1 -> 0 (black), 0 -> 255 (white) */
    }
  }
  free(above_copy);
  free(current_copy);
  free(cell_column);
  return NULL;
}

/* A growing buffer of bits, most significant first. */
typedef struct {
  uint8_t *bytes;
  size_t at, size;
  uint64_t pending;
  int pending_bits;
  int failed;
} bit_writer;

/* Makes room for more bytes; on failure keeps going without output (the caller throws). Rare: out of line. */
static __attribute__((noinline, cold)) void grow(bit_writer *out) {
  uint8_t *bigger = out->failed ? NULL : realloc(out->bytes, out->size * 2);
  if (bigger == NULL) {
    out->failed = 1;
    out->at = 0;
  } else {
    out->bytes = bigger;
    out->size *= 2;
  }
}

static inline void put(bit_writer *out, uint32_t code) {
  const int length = code & 0xff;
  out->pending = (out->pending << length) | (code >> 8);
  out->pending_bits += length;
  while (out->pending_bits >= 8) {
    out->pending_bits -= 8;
    if (__builtin_expect(out->at == out->size, 0)) grow(out);
    out->bytes[out->at++] = (uint8_t)(out->pending >> out->pending_bits);
  }
  out->pending &= (((uint64_t)1) << out->pending_bits) - 1;
}

static inline void put_run(bit_writer *out, int64_t run, const uint32_t *codes) {
  while (run > MAX_MAKEUP_RUN) {
    put(out, codes[CODE_TERMINATING + (MAX_MAKEUP_RUN >> 6)]);
    run -= MAX_MAKEUP_RUN;
  }
  if (run >= 64) put(out, codes[CODE_TERMINATING + (run >> 6)]);
  put(out, codes[run & 63]);
}

static inline int64_t run_bits(int64_t run, const uint32_t *codes) {
  int64_t bits = 0;
  while (run > MAX_MAKEUP_RUN) {
    bits += codes[CODE_TERMINATING + (MAX_MAKEUP_RUN >> 6)] & 0xff;
    run -= MAX_MAKEUP_RUN;
  }
  if (run >= 64) bits += codes[CODE_TERMINATING + (run >> 6)] & 0xff;
  return bits + (codes[run & 63] & 0xff);
}

#define HIGH_BITS 0x8080808080808080ULL

/* Eight pixels as one number, the first pixel in the lowest byte (on any byte order). */
static inline uint64_t load_pixels(const uint8_t *p) {
  uint64_t word;
  memcpy(&word, p, sizeof word);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  word = __builtin_bswap64(word);
#endif
  return word;
}

/*
 * The changing elements of one scan line, then the width three times; adds its MH bits and black
 * pixels. A pixel is black below 128, i.e. when its high bit is clear: eight pixels are looked at
 * at once, and the first that changes colour is found from the lowest set bit of a mask.
 */
static int64_t changing_elements(const uint8_t *row, int64_t width, int32_t *changes, const uint32_t *codes, int64_t *mh_bits, int64_t *black_pixels) {
  int64_t n = 0, run_start = 0, x = 0;
  int black = 0;
  for (;;) {
    /* Sixteen pixels per step while they last (a row is mostly long runs), then eight. */
    const uint64_t invert = black ? 0 : UINT64_MAX;
    for (; x + 16 <= width; x += 16) {
      const uint64_t low = (load_pixels(row + x) ^ invert) & HIGH_BITS, high = (load_pixels(row + x + 8) ^ invert) & HIGH_BITS;
      if ((low | high) != 0) {
        x += low != 0 ? __builtin_ctzll(low) >> 3 : 8 + (__builtin_ctzll(high) >> 3);
        goto found;
      }
    }
    for (; x + 8 <= width; x += 8) {
      const uint64_t word = load_pixels(row + x);
      const uint64_t changed = black ? (word & HIGH_BITS) : (~word & HIGH_BITS);
      if (changed != 0) {
        x += __builtin_ctzll(changed) >> 3;
        goto found;
      }
    }
    for (; x < width; x++) {
      if ((row[x] < 128) != black) goto found;
    }
    break;
  found: {
    const int64_t run = x - run_start;
    *mh_bits += run_bits(run, black ? codes + CODE_COLOUR : codes);
    if (black) *black_pixels += run;
    changes[n++] = (int32_t)x;
    black = !black;
    run_start = x;
  }
  }
  const int64_t run = width - run_start;
  *mh_bits += run_bits(run, black ? codes + CODE_COLOUR : codes);
  if (black) *black_pixels += run;
  changes[n] = changes[n + 1] = changes[n + 2] = (int32_t)width;
  return n;
}

static napi_value encode_g4(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 5) return throw_range(env, "encodeG4 needs 5 arguments");
  uint8_t *pixels;
  uint32_t *codes;
  size_t length, code_count;
  int64_t width, height, count_black_from;
  if (!typed_bytes(env, argv[0], napi_uint8_array, (void **)&pixels, &length)) return throw_range(env, "encodeG4: pixels must be a Uint8Array");
  if (!int_arg(env, argv[1], 1, 1 << 20, &width) || !int_arg(env, argv[2], 1, 1 << 20, &height)) return throw_range(env, "encodeG4: bad page size");
  if (!int_arg(env, argv[3], 0, INT32_MAX, &count_black_from)) return throw_range(env, "encodeG4: bad countBlackFrom");
  if (!typed_bytes(env, argv[4], napi_uint32_array, (void **)&codes, &code_count) || code_count != CODE_COUNT)
    return throw_range(env, "encodeG4: codes must be the Uint32Array of g4CodeTable()");
  if ((uint64_t)width * (uint64_t)height > length) return throw_range(env, "encodeG4: fewer pixels than width x height");

  const uint32_t *black_codes = codes + CODE_COLOUR;
  int32_t *reference = malloc(sizeof(int32_t) * (size_t)(width + 4));
  int32_t *coding = malloc(sizeof(int32_t) * (size_t)(width + 4));
  bit_writer out = {.bytes = malloc((size_t)height * 32 + 64), .at = 0, .size = (size_t)height * 32 + 64, .pending = 0, .pending_bits = 0, .failed = 0};
  if (reference == NULL || coding == NULL || out.bytes == NULL) {
    free(reference);
    free(coding);
    free(out.bytes);
    napi_throw_error(env, NULL, "encodeG4: out of memory");
    return NULL;
  }
  int64_t mh_bits = (int64_t)(codes[CODE_EOL] & 0xff) * RTC_EOLS;
  int64_t black_pixels = 0;
  reference[0] = reference[1] = reference[2] = (int32_t)width; /* the imaginary white line above the first */

  for (int64_t y = 0; y < height; y++) {
    int64_t line_black = 0;
    changing_elements(pixels + y * width, width, coding, codes, &mh_bits, &line_black);
    mh_bits += codes[CODE_EOL] & 0xff;
    if (y >= count_black_from) black_pixels += line_black;
    int64_t a0 = -1, a = 0, b = 0;
    int colour = 0;
    for (;;) {
      while (coding[a] <= a0) a++;
      const int64_t a1 = coding[a];
      while (reference[b] <= a0) b++;
      const int64_t b1_at = (b & 1) == colour ? b : b + 1;
      const int64_t b1 = reference[b1_at];
      const int64_t b2 = reference[b1_at + 1];
      if (b2 < a1) {
        put(&out, codes[CODE_PASS]);
        a0 = b2;
      } else if (a1 - b1 <= 3 && b1 - a1 <= 3) {
        put(&out, codes[CODE_VERTICAL + (a1 - b1 + 3)]);
        a0 = a1;
        colour ^= 1;
      } else {
        const int64_t a2 = coding[a + 1];
        put(&out, codes[CODE_HORIZONTAL]);
        put_run(&out, a1 - (a0 > 0 ? a0 : 0), colour == 0 ? codes : black_codes);
        put_run(&out, a2 - a1, colour == 0 ? black_codes : codes);
        a0 = a2;
      }
      if (a0 >= width) break;
    }
    int32_t *done = reference;
    reference = coding;
    coding = done;
  }
  put(&out, codes[CODE_EOL]);
  put(&out, codes[CODE_EOL]);
  if (out.pending_bits > 0) put(&out, (uint32_t)(8 - out.pending_bits));
  free(reference);
  free(coding);
  if (out.failed) {
    free(out.bytes);
    napi_throw_error(env, NULL, "encodeG4: out of memory");
    return NULL;
  }

  napi_value result, array_buffer, data, number;
  void *copy;
  napi_status status = napi_create_arraybuffer(env, out.at, &copy, &array_buffer);
  if (status == napi_ok) memcpy(copy, out.bytes, out.at);
  free(out.bytes);
  CHECK(status);
  CHECK(napi_create_typedarray(env, napi_uint8_array, out.at, array_buffer, 0, &data));
  CHECK(napi_create_object(env, &result));
  CHECK(napi_set_named_property(env, result, "data", data));
  CHECK(napi_create_double(env, (double)mh_bits, &number));
  CHECK(napi_set_named_property(env, result, "mhBits", number));
  CHECK(napi_create_double(env, (double)black_pixels, &number));
  CHECK(napi_set_named_property(env, result, "blackPixels", number));
  return result;
}

static napi_value grey_histograms(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 6) return throw_range(env, "greyHistograms needs 6 arguments");
  uint8_t *data;
  uint32_t *histograms;
  size_t length, entries;
  int64_t width, y_start, y_end, shift;
  if (!typed_bytes(env, argv[0], napi_uint8_array, (void **)&data, &length)) return throw_range(env, "greyHistograms: pixels must be a Uint8Array");
  if (!int_arg(env, argv[1], 1, 1 << 20, &width) || !int_arg(env, argv[2], 0, 1 << 20, &y_start) || !int_arg(env, argv[3], y_start, 1 << 20, &y_end) ||
      !int_arg(env, argv[4], 0, 31, &shift))
    return throw_range(env, "greyHistograms: bad rows or shift");
  if (!typed_bytes(env, argv[5], napi_uint32_array, (void **)&histograms, &entries) || entries < (size_t)(((width - 1) >> shift) + 1) * 256)
    return throw_range(env, "greyHistograms: histograms must be a Uint32Array of 256 entries per column of blocks");
  if ((uint64_t)width * (uint64_t)y_end > length) return throw_range(env, "greyHistograms: fewer pixels than the rows asked for");
  for (int64_t y = y_start; y < y_end; y++) {
    const uint8_t *row = data + y * width;
    for (int64_t x = 0; x < width; x++) {
      if ((x & 7) == 0) {
        while (x + 8 <= width && eight_are(row + x, UINT64_MAX)) x += 8;
        if (x >= width) break;
      }
      const int v = row[x];
      if (v != 255) histograms[(x >> shift) * 256 + v]++;
    }
  }
  return NULL;
}

static napi_value halftone_blocks(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value argv[9];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 9) return throw_range(env, "halftoneBlocks needs 9 arguments");
  uint8_t *data, *out, *mask, *levels, *cell_levels;
  size_t length, out_length, mask_length, levels_length, cell_length;
  int64_t width, height, block, cell;
  if (!typed_bytes(env, argv[0], napi_uint8_array, (void **)&data, &length) || !typed_bytes(env, argv[1], napi_uint8_array, (void **)&out, &out_length))
    return throw_range(env, "halftoneBlocks: pixels and out must be Uint8Arrays");
  if (!int_arg(env, argv[2], 1, 1 << 20, &width) || !int_arg(env, argv[3], 1, 1 << 20, &height)) return throw_range(env, "halftoneBlocks: bad page size");
  if ((uint64_t)width * (uint64_t)height > length || (uint64_t)width * (uint64_t)height > out_length)
    return throw_range(env, "halftoneBlocks: fewer pixels than width x height");
  if (!int_arg(env, argv[5], 1, 1 << 20, &block) || !int_arg(env, argv[8], 1, 64, &cell)) return throw_range(env, "halftoneBlocks: bad block or cell size");
  const int64_t columns = (width + block - 1) / block, rows = (height + block - 1) / block;
  if (!typed_bytes(env, argv[4], napi_uint8_array, (void **)&mask, &mask_length) || mask_length < (size_t)(columns * rows))
    return throw_range(env, "halftoneBlocks: mask must be a Uint8Array of one byte per block");
  if (!typed_bytes(env, argv[6], napi_uint8_array, (void **)&levels, &levels_length) || levels_length != 256)
    return throw_range(env, "halftoneBlocks: levels must be a Uint8Array(256)");
  if (!typed_bytes(env, argv[7], napi_uint8_array, (void **)&cell_levels, &cell_length) || cell_length != (size_t)(cell * cell))
    return throw_range(env, "halftoneBlocks: cellLevels must be a Uint8Array of cell x cell entries");
  /* Each column's place in a row of the cell, worked out once (a division per pixel otherwise). */
  uint8_t *cell_column = malloc((size_t)width);
  if (cell_column == NULL) {
    napi_throw_error(env, NULL, "halftoneBlocks: out of memory");
    return NULL;
  }
  for (int64_t x = 0, column = 0; x < width; x++, column = column + 1 == cell ? 0 : column + 1) cell_column[x] = (uint8_t)column;
  for (int64_t by = 0; by < rows; by++) {
    const int64_t y_end = (by + 1) * block < height ? (by + 1) * block : height;
    for (int64_t bx = 0; bx < columns; bx++) {
      if (mask[by * columns + bx] != 1) continue;
      const int64_t x_start = bx * block, x_end = x_start + block < width ? x_start + block : width;
      for (int64_t y = by * block; y < y_end; y++) {
        const uint8_t *cell_row = cell_levels + (y % cell) * cell;
        const uint8_t *from = data + y * width;
        uint8_t *to = out + y * width;
        for (int64_t x = x_start; x < x_end; x++) to[x] = levels[from[x]] > cell_row[cell_column[x]] ? 255 : 0;
      }
    }
  }
  free(cell_column);
  return NULL;
}

/* smoothGreys' test of the sample at row[x]: a mid grey within smoothStep of its right and lower neighbours is counted. */
static inline void count_smooth(const uint8_t *row, int64_t x, int64_t stride, int64_t mid_min, int64_t mid_max, int64_t smooth_step, uint32_t *levels) {
  const int v = row[x];
  if (v < mid_min || v > mid_max) return;
  const int right = row[x + 1] - v;
  const int below = row[x + stride] - v;
  if (right <= smooth_step && right >= -smooth_step && below <= smooth_step && below >= -smooth_step) levels[v]++;
}

static napi_value smooth_greys(napi_env env, napi_callback_info info) {
  size_t argc = 11;
  napi_value argv[11];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 11) return throw_range(env, "smoothGreys needs 11 arguments");
  uint8_t *data;
  uint32_t *levels;
  size_t length, entries;
  int64_t stride, left, top, width, height, step, mid_min, mid_max, smooth_step;
  if (!typed_bytes(env, argv[0], napi_uint8_array, (void **)&data, &length)) return throw_range(env, "smoothGreys: pixels must be a Uint8Array");
  if (!int_arg(env, argv[1], 1, 1 << 20, &stride) || !int_arg(env, argv[2], 0, 1 << 20, &left) || !int_arg(env, argv[3], 0, 1 << 20, &top) ||
      !int_arg(env, argv[4], 2, 1 << 20, &width) || !int_arg(env, argv[5], 2, 1 << 20, &height) || !int_arg(env, argv[6], 1, 64, &step) ||
      !int_arg(env, argv[7], 0, 255, &mid_min) || !int_arg(env, argv[8], 0, 255, &mid_max) || !int_arg(env, argv[9], 0, 255, &smooth_step))
    return throw_range(env, "smoothGreys: bad region or level");
  if (!typed_bytes(env, argv[10], napi_uint32_array, (void **)&levels, &entries) || entries != 256) return throw_range(env, "smoothGreys: levels must be a Uint32Array(256)");
  if (left + width > stride || (uint64_t)stride * (uint64_t)(top + height) > length) return throw_range(env, "smoothGreys: the region lies outside the image");
  const int64_t x_end = left + width - 1;
  const int64_t per_row = (x_end - left + step - 1) / step;
  int64_t sampled = 0;
#if VECTORS
  /* Sixteen pixels at a time where the samples fall on the same lanes of every sixteen (a step
     that divides 16): the lanes of samples, then mid grey, then smooth, each a mask. */
  const int vectors = 16 % step == 0;
  const u8x16 min16 = splat16((int)mid_min), max16 = splat16((int)mid_max), smooth16 = splat16((int)smooth_step);
  u8x16 sample_lanes = {0};
  for (int i = 0; i < 16; i += (int)step) sample_lanes[i] = 0xff;
#endif
  for (int64_t y = top; y < top + height - 1; y += step) {
    const uint8_t *row = data + y * stride;
    sampled += per_row;
    int64_t x = left;
    while (x < x_end) {
#if VECTORS
      if (vectors && x + 16 <= x_end) {
        const u8x16 v = load16(row + x);
        u8x16 hit = sample_lanes & (u8x16)(v >= min16) & (u8x16)(v <= max16);
        if (any16(hit)) {
          hit &= (u8x16)(absdiff16(load16(row + x + 1), v) <= smooth16) & (u8x16)(absdiff16(load16(row + x + stride), v) <= smooth16);
          if (any16(hit)) {
            for (int i = 0; i < 16; i++) {
              if (hit[i]) levels[v[i]]++;
            }
          }
        }
        x += 16;
        continue;
      }
#endif
      count_smooth(row, x, stride, mid_min, mid_max, smooth_step, levels);
      x += step;
    }
  }
  napi_value result;
  CHECK(napi_create_double(env, (double)sampled, &result));
  return result;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor properties[] = {
      {"thresholdShaded", NULL, threshold_shaded, NULL, NULL, NULL, napi_enumerable, NULL},
      {"encodeG4", NULL, encode_g4, NULL, NULL, NULL, napi_enumerable, NULL},
      {"greyHistograms", NULL, grey_histograms, NULL, NULL, NULL, napi_enumerable, NULL},
      {"smoothGreys", NULL, smooth_greys, NULL, NULL, NULL, napi_enumerable, NULL},
      {"halftoneBlocks", NULL, halftone_blocks, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties) != napi_ok) return NULL;
  return exports;
}
