/*
 * spandsp_engine: a small, synchronous N-API binding of Debian's libspandsp 0.0.6 for Faxline.
 *
 * What it does: it runs one T.30 fax terminal per session, either over T.38 (spandsp's
 * t38_terminal, which hands out raw IFP packets) or over G.711 audio (spandsp's fax terminal with
 * its V.21/V.27ter/V.29/V.17 modems, fed 16-bit linear samples). A session sends (or, for tests,
 * receives) a TIFF-F file.
 *
 * How it works: nothing runs on its own. JavaScript drives the clock: `t38Advance(h, samples)`
 * calls t38_terminal_send_timeout() in steps of at most 160 samples (20 ms at 8 kHz, the step
 * spandsp's pacing expects), `t38ReceiveIfp(h, ifp, seq)` hands one incoming IFP to the T.38 core,
 * and `audioProcess(h, rx)` runs fax_rx() over the received frame and fax_tx() for a frame of the
 * same length. Every spandsp callback fired during such a call (outgoing IFP packets with their
 * repeat count, HDLC control frames, phase B/D/E) is appended to per-session queues, and the call
 * returns and empties those queues. No callbacks into JavaScript; one call (t38ReceiveIfpAsync)
 * runs on a thread of libuv's pool, the others on the caller's thread.
 *
 * The UDPTL framing, sequence numbers, redundancy and sockets are not here: they are TypeScript
 * (src/line/media/udptl.ts). See docs/adr/0004-fax-engine-spandsp-addon.md.
 *
 * Exports (all synchronous; `h` is the handle returned by a create function):
 *   t38Create(options) -> h           audioCreate(options) -> h
 *   t38Advance(h, samples) -> { packets: [{ ifp: Buffer, count }], events, finished, samples }
 *   t38AdvanceInto(h, samples, out: Uint8Array) -> packets written to `out`, or -1: t38Advance
 *     for the common tick (no event), without building objects; -1 leaves the step for
 *     t38Advance(h, 0). The layout is at t38_advance_into below.
 *   t38ReceiveIfp(h, ifp, seq) -> same shape
 *   t38ReceiveIfpAsync(h, ifp, seq) -> Promise of the same shape: the IFP is handled on a thread of
 *     libuv's pool, so that a long step (the sender reads and encodes its page when the receiver's
 *     DIS arrives, several ms) does not hold up the other sessions on the event loop. Until the
 *     promise settles the session takes no other call (they throw ERR_SPANDSP_ENGINE_BUSY);
 *     free() meanwhile is carried out when it ends.
 *   audioProcess(h, rx: Int16Array | number) -> { audio: Int16Array, events, finished, samples }
 *   statistics(h) -> { pagesTx, pagesRx, pagesInFile, bitRate, ecm, encoding, ... }
 *   free(h)
 *   uncompressTiff(src, dst, maxBytes) -> Promise<pages>: writes the bilevel TIFF `src` (G4, G3) to
 *     `dst` uncompressed, on libuv's thread pool; 0 (and no file) when that would take more than
 *     `maxBytes`. A sender given such a file reads its page at DIS
 *     without decoding it: that step of the T.30 engine takes about half the time (ADR 0010).
 *   completionCodeText(code) -> t30_completion_code_to_str(code)
 *   frameName(fcf) -> t30_frametype(fcf)
 * See src/line/fax-engine/spandsp-engine.ts for the options and the typed wrapper.
 */
#include <node_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <tiffio.h>
#include <spandsp.h>

#define SAMPLES_PER_STEP 160
/* Largest HDLC control frame kept in an event (T38_MAX_HDLC_LEN is 260). */
#define MAX_FRAME_BYTES 264
/* Longest audio frame accepted by audioProcess: 1 s at 8 kHz. */
#define MAX_AUDIO_SAMPLES 8000

enum session_kind { KIND_T38 = 1, KIND_AUDIO = 2 };
enum event_type { EV_FRAME = 1, EV_PHASE_B, EV_PHASE_D, EV_PHASE_E };

typedef struct {
    int type;
    /* EV_FRAME: 1 received, 0 sent. */
    int direction;
    /* FCF for frames and phases B/D; completion code for phase E. */
    int code;
    int64_t at_sample;
    int len;
    uint8_t bytes[MAX_FRAME_BYTES];
} engine_event_t;

typedef struct {
    uint8_t *bytes;
    int len;
    int count;
} out_packet_t;

typedef struct {
    int kind;
    int closed;
    t38_terminal_state_t *t38;
    fax_state_t *fax;
    t30_state_t *t30;
    int64_t samples;
    int phase_e_seen;
    int spandsp_done;
    int report_image_frames;

    engine_event_t *events;
    size_t events_len;
    size_t events_cap;

    out_packet_t *packets;
    size_t packets_len;
    size_t packets_cap;

    /* The last control frame received, attached to the phase B event it triggers (DIS or DCS). */
    uint8_t last_rx_frame[MAX_FRAME_BYTES];
    int last_rx_len;

    /* Page figures from the most recent phase D: spandsp zeroes them once phase E tidies up. */
    t30_stats_t last_page;
    int have_last_page;
    int last_completion_code;

    /* A t38ReceiveIfpAsync call runs on a thread of libuv's pool: no other call may touch the
       session meanwhile (they throw ERR_SPANDSP_ENGINE_BUSY), and free() waits for it to end. */
    int busy;
    int free_pending;
} session_t;

/* ---- error helpers ------------------------------------------------------------------------- */

#define NAPI_CALL(env, call)                                                                       \
    do {                                                                                           \
        napi_status status_ = (call);                                                              \
        if (status_ != napi_ok) {                                                                  \
            const napi_extended_error_info *info_ = NULL;                                          \
            napi_get_last_error_info((env), &info_);                                               \
            bool pending_ = false;                                                                 \
            napi_is_exception_pending((env), &pending_);                                           \
            if (!pending_)                                                                         \
                napi_throw_error((env), "ERR_SPANDSP_ENGINE",                                      \
                                 info_ && info_->error_message ? info_->error_message              \
                                                               : "N-API call failed: " #call);     \
            return NULL;                                                                           \
        }                                                                                          \
    } while (0)

static napi_value throw_type_error(napi_env env, const char *message)
{
    napi_throw_type_error(env, "ERR_SPANDSP_ENGINE_ARGUMENT", message);
    return NULL;
}

/* ---- queues -------------------------------------------------------------------------------- */

static engine_event_t *push_event(session_t *s, int type)
{
    if (s->events_len == s->events_cap) {
        size_t cap = s->events_cap ? s->events_cap * 2 : 16;
        engine_event_t *grown = realloc(s->events, cap * sizeof(*grown));
        if (grown == NULL)
            return NULL;
        s->events = grown;
        s->events_cap = cap;
    }
    engine_event_t *e = &s->events[s->events_len++];
    memset(e, 0, offsetof(engine_event_t, bytes));
    e->type = type;
    e->at_sample = s->samples;
    return e;
}

static void clear_packets(session_t *s)
{
    for (size_t i = 0; i < s->packets_len; i++)
        free(s->packets[i].bytes);
    s->packets_len = 0;
}

/* ---- spandsp callbacks ---------------------------------------------------------------------- */

static int tx_packet_handler(t38_core_state_t *core, void *user_data, const uint8_t *buf, int len, int count)
{
    session_t *s = user_data;
    if (s->packets_len == s->packets_cap) {
        size_t cap = s->packets_cap ? s->packets_cap * 2 : 16;
        out_packet_t *grown = realloc(s->packets, cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        s->packets = grown;
        s->packets_cap = cap;
    }
    uint8_t *copy = malloc(len > 0 ? (size_t) len : 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, buf, (size_t) len);
    s->packets[s->packets_len].bytes = copy;
    s->packets[s->packets_len].len = len;
    s->packets[s->packets_len].count = count;
    s->packets_len++;
    return 0;
}

static void snapshot_page(session_t *s)
{
    t30_stats_t stats;
    t30_get_transfer_statistics(s->t30, &stats);
    if (stats.width > 0) {
        s->last_page = stats;
        s->have_last_page = 1;
    }
}

static void real_time_frame_handler(t30_state_t *t30, void *user_data, int direction, const uint8_t msg[], int len)
{
    session_t *s = user_data;
    if (len < 3)
        return;
    if (direction) {
        int keep = len < MAX_FRAME_BYTES ? len : MAX_FRAME_BYTES;
        memcpy(s->last_rx_frame, msg, (size_t) keep);
        s->last_rx_len = keep;
    }
    /* ECM image frames (FCD, RCP) are hundreds per page: reported only when asked for. */
    if (!s->report_image_frames && (msg[2] == T4_FCD || msg[2] == T4_RCP))
        return;
    engine_event_t *e = push_event(s, EV_FRAME);
    if (e == NULL)
        return;
    e->direction = direction ? 1 : 0;
    e->code = msg[2];
    e->len = len < MAX_FRAME_BYTES ? len : MAX_FRAME_BYTES;
    memcpy(e->bytes, msg, (size_t) e->len);
}

static int phase_b_handler(t30_state_t *t30, void *user_data, int result)
{
    session_t *s = user_data;
    engine_event_t *e = push_event(s, EV_PHASE_B);
    if (e != NULL) {
        e->code = result;
        if (s->last_rx_len >= 3 && s->last_rx_frame[2] == (uint8_t) result) {
            e->len = s->last_rx_len;
            memcpy(e->bytes, s->last_rx_frame, (size_t) e->len);
        }
    }
    return T30_ERR_OK;
}

static int phase_d_handler(t30_state_t *t30, void *user_data, int result)
{
    session_t *s = user_data;
    snapshot_page(s);
    engine_event_t *e = push_event(s, EV_PHASE_D);
    if (e != NULL)
        e->code = result;
    return T30_ERR_OK;
}

static void phase_e_handler(t30_state_t *t30, void *user_data, int completion_code)
{
    session_t *s = user_data;
    s->phase_e_seen = 1;
    s->last_completion_code = completion_code;
    engine_event_t *e = push_event(s, EV_PHASE_E);
    if (e != NULL)
        e->code = completion_code;
}

/* ---- handle -------------------------------------------------------------------------------- */

static void release_session(session_t *s)
{
    if (s->closed)
        return;
    s->closed = 1;
    if (s->t38 != NULL) {
        t38_terminal_free(s->t38); /* releases the T.30 state too */
        s->t38 = NULL;
    }
    if (s->fax != NULL) {
        fax_free(s->fax);
        s->fax = NULL;
    }
    s->t30 = NULL;
    clear_packets(s);
    free(s->packets);
    s->packets = NULL;
    s->packets_cap = 0;
    free(s->events);
    s->events = NULL;
    s->events_len = s->events_cap = 0;
}

static void finalize_session(napi_env env, void *data, void *hint)
{
    session_t *s = data;
    release_session(s);
    free(s);
}

static session_t *get_session(napi_env env, napi_value value, int kind)
{
    napi_valuetype type;
    if (napi_typeof(env, value, &type) != napi_ok || type != napi_external) {
        throw_type_error(env, "expected a spandsp engine session handle");
        return NULL;
    }
    session_t *s = NULL;
    if (napi_get_value_external(env, value, (void **) &s) != napi_ok || s == NULL) {
        throw_type_error(env, "expected a spandsp engine session handle");
        return NULL;
    }
    if (s->closed || s->free_pending) {
        napi_throw_error(env, "ERR_SPANDSP_ENGINE_CLOSED", "the spandsp engine session was already freed");
        return NULL;
    }
    if (s->busy) {
        napi_throw_error(env, "ERR_SPANDSP_ENGINE_BUSY", "the spandsp engine session is handling an IFP on another thread (t38ReceiveIfpAsync)");
        return NULL;
    }
    if (kind != 0 && s->kind != kind) {
        throw_type_error(env, kind == KIND_T38 ? "expected a T.38 session" : "expected an audio session");
        return NULL;
    }
    return s;
}

/* ---- option parsing ------------------------------------------------------------------------ */

static int has_prop(napi_env env, napi_value obj, const char *name, napi_value *out)
{
    bool has = false;
    if (napi_has_named_property(env, obj, name, &has) != napi_ok || !has)
        return 0;
    if (napi_get_named_property(env, obj, name, out) != napi_ok)
        return 0;
    napi_valuetype type;
    napi_typeof(env, *out, &type);
    return type != napi_undefined && type != napi_null;
}

/* Returns 1 when read, 0 when absent, -1 after throwing. */
static int read_int(napi_env env, napi_value obj, const char *name, int *out)
{
    napi_value v;
    if (!has_prop(env, obj, name, &v))
        return 0;
    int32_t i;
    if (napi_get_value_int32(env, v, &i) != napi_ok) {
        char message[96];
        snprintf(message, sizeof(message), "option %s must be a number", name);
        throw_type_error(env, message);
        return -1;
    }
    *out = i;
    return 1;
}

static int read_bool(napi_env env, napi_value obj, const char *name, int *out)
{
    napi_value v;
    if (!has_prop(env, obj, name, &v))
        return 0;
    bool b;
    if (napi_get_value_bool(env, v, &b) != napi_ok) {
        char message[96];
        snprintf(message, sizeof(message), "option %s must be a boolean", name);
        throw_type_error(env, message);
        return -1;
    }
    *out = b ? 1 : 0;
    return 1;
}

static int read_string(napi_env env, napi_value obj, const char *name, char *buf, size_t size)
{
    napi_value v;
    if (!has_prop(env, obj, name, &v))
        return 0;
    size_t len = 0;
    if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) {
        char message[96];
        snprintf(message, sizeof(message), "option %s must be a string", name);
        throw_type_error(env, message);
        return -1;
    }
    if (len + 1 > size) {
        char message[96];
        snprintf(message, sizeof(message), "option %s is longer than %zu bytes", name, size - 1);
        throw_type_error(env, message);
        return -1;
    }
    napi_get_value_string_utf8(env, v, buf, size, &len);
    return 1;
}

typedef struct {
    int calling;
    int receive;
    char tiff_path[4096];
    char local_ident[T30_MAX_IDENT_LEN + 1];
    int ecm;
    int compressions;
    int max_bit_rate;
    int log_level;
    int report_image_frames;
    /* T.38 only */
    int t38_version;
    int max_datagram;
    int pacing;
} session_options_t;

static int parse_options(napi_env env, napi_value obj, session_options_t *o)
{
    napi_valuetype type;
    if (napi_typeof(env, obj, &type) != napi_ok || type != napi_object) {
        throw_type_error(env, "expected an options object");
        return -1;
    }
    memset(o, 0, sizeof(*o));
    o->calling = 1;
    o->ecm = 1;
    o->compressions = T30_SUPPORT_T4_1D_COMPRESSION | T30_SUPPORT_T4_2D_COMPRESSION | T30_SUPPORT_T6_COMPRESSION;
    o->max_bit_rate = 14400;
    o->t38_version = 0;
    o->max_datagram = 400;
    o->pacing = 1;

    char mode[16] = "send";
    if (read_string(env, obj, "mode", mode, sizeof(mode)) < 0)
        return -1;
    if (strcmp(mode, "send") == 0)
        o->receive = 0;
    else if (strcmp(mode, "receive") == 0)
        o->receive = 1;
    else {
        throw_type_error(env, "option mode must be \"send\" or \"receive\"");
        return -1;
    }
    int r = read_string(env, obj, "tiffPath", o->tiff_path, sizeof(o->tiff_path));
    if (r < 0)
        return -1;
    if (r == 0 || o->tiff_path[0] == '\0') {
        throw_type_error(env, "option tiffPath is required");
        return -1;
    }
    if (read_string(env, obj, "localIdent", o->local_ident, sizeof(o->local_ident)) < 0)
        return -1;
    if (read_bool(env, obj, "calling", &o->calling) < 0 || read_bool(env, obj, "ecm", &o->ecm) < 0
        || read_int(env, obj, "compressions", &o->compressions) < 0 || read_int(env, obj, "maxBitRate", &o->max_bit_rate) < 0
        || read_int(env, obj, "logLevel", &o->log_level) < 0
        || read_bool(env, obj, "reportImageFrames", &o->report_image_frames) < 0
        || read_int(env, obj, "t38Version", &o->t38_version) < 0 || read_int(env, obj, "maxDatagram", &o->max_datagram) < 0
        || read_bool(env, obj, "pacing", &o->pacing) < 0)
        return -1;
    if (o->t38_version < 0 || o->t38_version > 3) {
        throw_type_error(env, "option t38Version must be 0, 1, 2 or 3");
        return -1;
    }
    if (o->compressions == 0) {
        throw_type_error(env, "option compressions must name at least one compression");
        return -1;
    }
    if (o->max_bit_rate != 14400 && o->max_bit_rate != 9600 && o->max_bit_rate != 4800) {
        throw_type_error(env, "option maxBitRate must be 14400 (V.17), 9600 (V.29) or 4800 (V.27ter)");
        return -1;
    }
    return 0;
}

static void configure_t30(session_t *s, const session_options_t *o)
{
    t30_state_t *t30 = s->t30;
    if (o->local_ident[0] != '\0')
        t30_set_tx_ident(t30, o->local_ident);
    if (o->receive) {
        t30_set_rx_file(t30, o->tiff_path, -1);
        /* Receive what fax machines send: A4, B4 (2048 pixels) and A3 (2432) wide, any length
           (A4, Letter, Legal, B4, longer), standard, fine, superfine (200 x 400), 300 x 300 and
           400 x 400 (R16). SpanDSP's default DIS offers only A4 width and no R16: a sender of a
           B4 or A3 page then fails the call (or shrinks the page) and a 400 dpi one drops to
           superfine at best. The stored TIFF keeps each page's width and resolution. */
        t30_set_supported_image_sizes(t30, T30_SUPPORT_215MM_WIDTH | T30_SUPPORT_255MM_WIDTH | T30_SUPPORT_303MM_WIDTH
                                               | T30_SUPPORT_A4_LENGTH | T30_SUPPORT_B4_LENGTH | T30_SUPPORT_US_LETTER_LENGTH
                                               | T30_SUPPORT_US_LEGAL_LENGTH | T30_SUPPORT_UNLIMITED_LENGTH);
        t30_set_supported_resolutions(t30, T30_SUPPORT_STANDARD_RESOLUTION | T30_SUPPORT_FINE_RESOLUTION | T30_SUPPORT_SUPERFINE_RESOLUTION
                                               | T30_SUPPORT_R8_RESOLUTION | T30_SUPPORT_R16_RESOLUTION | T30_SUPPORT_300_300_RESOLUTION
                                               | T30_SUPPORT_400_400_RESOLUTION);
    } else
        t30_set_tx_file(t30, o->tiff_path, -1, -1);
    t30_set_ecm_capability(t30, o->ecm);
    t30_set_supported_compressions(t30, o->compressions);
    /* The modems offered in DIS/DCS bound the bit rate: V.17 up to 14400, V.29 up to 9600, V.27ter
       up to 4800. Lower rates within a modem come from the T.30 fallback after FTT. */
    int modems = T30_SUPPORT_V27TER;
    if (o->max_bit_rate >= 9600)
        modems |= T30_SUPPORT_V29;
    if (o->max_bit_rate >= 14400)
        modems |= T30_SUPPORT_V17;
    t30_set_supported_modems(t30, modems);
    t30_set_phase_b_handler(t30, phase_b_handler, s);
    t30_set_phase_d_handler(t30, phase_d_handler, s);
    t30_set_phase_e_handler(t30, phase_e_handler, s);
    t30_set_real_time_frame_handler(t30, real_time_frame_handler, s);
    s->report_image_frames = o->report_image_frames;
    if (o->log_level > 0) {
        int level = SPAN_LOG_SHOW_SEVERITY | SPAN_LOG_SHOW_PROTOCOL | SPAN_LOG_SHOW_SAMPLE_TIME | o->log_level;
        span_log_set_level(t30_get_logging_state(t30), level);
        span_log_set_tag(t30_get_logging_state(t30), o->receive ? "rx" : "tx");
    }
}

static napi_value wrap_session(napi_env env, session_t *s)
{
    napi_value handle;
    if (napi_create_external(env, s, finalize_session, NULL, &handle) != napi_ok) {
        release_session(s);
        free(s);
        napi_throw_error(env, "ERR_SPANDSP_ENGINE", "cannot create the session handle");
        return NULL;
    }
    return handle;
}

/* ---- exported functions ---------------------------------------------------------------------- */

static napi_value t38_create(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1)
        return throw_type_error(env, "t38Create(options) needs an options object");
    session_options_t o;
    if (parse_options(env, argv[0], &o) < 0)
        return NULL;

    session_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        napi_throw_error(env, "ERR_SPANDSP_ENGINE", "out of memory");
        return NULL;
    }
    s->kind = KIND_T38;
    s->t38 = t38_terminal_init(NULL, o.calling, tx_packet_handler, s);
    if (s->t38 == NULL) {
        free(s);
        napi_throw_error(env, "ERR_SPANDSP_ENGINE", "t38_terminal_init failed");
        return NULL;
    }
    s->t30 = t38_terminal_get_t30_state(s->t38);
    t38_core_state_t *core = t38_terminal_get_t38_core_state(s->t38);
    t38_terminal_set_config(s->t38, o.pacing ? 0 : T38_TERMINAL_OPTION_NO_PACING);
    t38_set_t38_version(core, o.t38_version);
    t38_set_max_datagram_size(core, o.max_datagram);
    if (o.log_level > 0) {
        int level = SPAN_LOG_SHOW_SEVERITY | SPAN_LOG_SHOW_PROTOCOL | SPAN_LOG_SHOW_SAMPLE_TIME | o.log_level;
        span_log_set_level(t38_core_get_logging_state(core), level);
        span_log_set_level(t38_terminal_get_logging_state(s->t38), level);
    }
    configure_t30(s, &o);
    return wrap_session(env, s);
}

static napi_value audio_create(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1)
        return throw_type_error(env, "audioCreate(options) needs an options object");
    session_options_t o;
    if (parse_options(env, argv[0], &o) < 0)
        return NULL;

    session_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        napi_throw_error(env, "ERR_SPANDSP_ENGINE", "out of memory");
        return NULL;
    }
    s->kind = KIND_AUDIO;
    s->fax = fax_init(NULL, o.calling);
    if (s->fax == NULL) {
        free(s);
        napi_throw_error(env, "ERR_SPANDSP_ENGINE", "fax_init failed");
        return NULL;
    }
    fax_set_transmit_on_idle(s->fax, 1);
    s->t30 = fax_get_t30_state(s->fax);
    if (o.log_level > 0) {
        int level = SPAN_LOG_SHOW_SEVERITY | SPAN_LOG_SHOW_PROTOCOL | SPAN_LOG_SHOW_SAMPLE_TIME | o.log_level;
        span_log_set_level(fax_get_logging_state(s->fax), level);
    }
    configure_t30(s, &o);
    return wrap_session(env, s);
}

static napi_value set_prop(napi_env env, napi_value obj, const char *name, napi_value value)
{
    NAPI_CALL(env, napi_set_named_property(env, obj, name, value));
    return obj;
}

static napi_value make_int(napi_env env, int64_t v)
{
    napi_value out;
    if (napi_create_int64(env, v, &out) != napi_ok)
        return NULL;
    return out;
}

static napi_value make_bool(napi_env env, int v)
{
    napi_value out;
    if (napi_get_boolean(env, v != 0, &out) != napi_ok)
        return NULL;
    return out;
}

static napi_value make_string(napi_env env, const char *v)
{
    napi_value out;
    if (napi_create_string_utf8(env, v ? v : "", NAPI_AUTO_LENGTH, &out) != napi_ok)
        return NULL;
    return out;
}

static napi_value make_bytes(napi_env env, const uint8_t *bytes, size_t len)
{
    napi_value out;
    void *data = NULL;
    if (napi_create_buffer_copy(env, len, len ? bytes : (const uint8_t *) "", &data, &out) != napi_ok)
        return NULL;
    return out;
}

static const char *event_type_name(int type)
{
    switch (type) {
    case EV_FRAME:
        return "frame";
    case EV_PHASE_B:
        return "phaseB";
    case EV_PHASE_D:
        return "phaseD";
    case EV_PHASE_E:
        return "phaseE";
    }
    return "unknown";
}

/* Moves the queued events into a JS array. */
static napi_value drain_events(napi_env env, session_t *s)
{
    napi_value array;
    NAPI_CALL(env, napi_create_array_with_length(env, s->events_len, &array));
    for (size_t i = 0; i < s->events_len; i++) {
        const engine_event_t *e = &s->events[i];
        napi_value obj;
        NAPI_CALL(env, napi_create_object(env, &obj));
        if (!set_prop(env, obj, "type", make_string(env, event_type_name(e->type)))
            || !set_prop(env, obj, "atSample", make_int(env, e->at_sample)))
            return NULL;
        switch (e->type) {
        case EV_FRAME:
            if (!set_prop(env, obj, "direction", make_string(env, e->direction ? "rx" : "tx"))
                || !set_prop(env, obj, "fcf", make_int(env, e->code))
                || !set_prop(env, obj, "name", make_string(env, t30_frametype((uint8_t) e->code)))
                || !set_prop(env, obj, "bytes", make_bytes(env, e->bytes, (size_t) e->len)))
                return NULL;
            break;
        case EV_PHASE_B:
            if (!set_prop(env, obj, "fcf", make_int(env, e->code))
                || !set_prop(env, obj, "name", make_string(env, t30_frametype((uint8_t) e->code))))
                return NULL;
            if (e->len > 0) {
                if (!set_prop(env, obj, "frame", make_bytes(env, e->bytes, (size_t) e->len)))
                    return NULL;
            } else {
                napi_value null_value;
                NAPI_CALL(env, napi_get_null(env, &null_value));
                if (!set_prop(env, obj, "frame", null_value))
                    return NULL;
            }
            break;
        case EV_PHASE_D:
            if (!set_prop(env, obj, "fcf", make_int(env, e->code))
                || !set_prop(env, obj, "name", make_string(env, t30_frametype((uint8_t) e->code))))
                return NULL;
            break;
        case EV_PHASE_E:
            if (!set_prop(env, obj, "completionCode", make_int(env, e->code))
                || !set_prop(env, obj, "text", make_string(env, t30_completion_code_to_str(e->code))))
                return NULL;
            break;
        }
        NAPI_CALL(env, napi_set_element(env, array, (uint32_t) i, obj));
    }
    s->events_len = 0;
    return array;
}

static napi_value drain_packets(napi_env env, session_t *s)
{
    napi_value array;
    NAPI_CALL(env, napi_create_array_with_length(env, s->packets_len, &array));
    for (size_t i = 0; i < s->packets_len; i++) {
        napi_value obj;
        NAPI_CALL(env, napi_create_object(env, &obj));
        if (!set_prop(env, obj, "ifp", make_bytes(env, s->packets[i].bytes, (size_t) s->packets[i].len))
            || !set_prop(env, obj, "count", make_int(env, s->packets[i].count)))
            return NULL;
        NAPI_CALL(env, napi_set_element(env, array, (uint32_t) i, obj));
    }
    clear_packets(s);
    return array;
}

static napi_value t38_step_result(napi_env env, session_t *s)
{
    napi_value obj;
    NAPI_CALL(env, napi_create_object(env, &obj));
    napi_value packets = drain_packets(env, s);
    if (packets == NULL)
        return NULL;
    napi_value events = drain_events(env, s);
    if (events == NULL)
        return NULL;
    if (!set_prop(env, obj, "packets", packets) || !set_prop(env, obj, "events", events)
        || !set_prop(env, obj, "finished", make_bool(env, s->phase_e_seen))
        || !set_prop(env, obj, "stopped", make_bool(env, s->spandsp_done))
        || !set_prop(env, obj, "samples", make_int(env, s->samples)))
        return NULL;
    return obj;
}

/* The bytes of `value` when it is a Uint8Array (`data` already points past its byte offset);
   false otherwise, with nothing thrown. */
static bool get_uint8_array(napi_env env, napi_value value, void **data, size_t *length)
{
    bool is_typed = false;
    napi_typedarray_type ta_type;
    napi_value ab;
    size_t offset;
    return napi_is_typedarray(env, value, &is_typed) == napi_ok && is_typed
        && napi_get_typedarray_info(env, value, &ta_type, length, data, &ab, &offset) == napi_ok && ta_type == napi_uint8_array;
}

/* Reads (handle, samples) and runs the T.38 terminal's clock that far, in steps of at most
   SAMPLES_PER_STEP. Returns the session, or NULL with a JS exception pending. */
static session_t *advance_t38_args(napi_env env, napi_value argv[2])
{
    session_t *s = get_session(env, argv[0], KIND_T38);
    if (s == NULL)
        return NULL;
    int64_t samples;
    if (napi_get_value_int64(env, argv[1], &samples) != napi_ok || samples < 0 || samples > 8000 * 3600) {
        throw_type_error(env, "samples must be a whole number from 0 to 28 800 000 (one hour)");
        return NULL;
    }
    while (samples > 0) {
        int step = samples > SAMPLES_PER_STEP ? SAMPLES_PER_STEP : (int) samples;
        s->samples += step;
        samples -= step;
        if (t38_terminal_send_timeout(s->t38, step))
            s->spandsp_done = 1;
    }
    return s;
}

static napi_value t38_advance(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2];
    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 2)
        return throw_type_error(env, "t38Advance(handle, samples)");
    session_t *s = advance_t38_args(env, argv);
    if (s == NULL)
        return NULL;
    return t38_step_result(env, s);
}

static void put_u32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
    p[2] = (uint8_t) (v >> 16);
    p[3] = (uint8_t) (v >> 24);
}

/* t38AdvanceInto(h, samples, out): t38Advance without building objects, for the tick of every call.
   When the step has no event and the session has not finished, its packets go into `out` (a
   Uint8Array): u32 samples, then per packet u16 length, u16 count and the bytes (little-endian),
   and the number of packets is returned. Otherwise (events, phase E, spandsp done, or `out` too
   small) nothing is taken from the queues and -1 is returned: t38Advance(h, 0) then hands out the
   whole step. */
static napi_value t38_advance_into(napi_env env, napi_callback_info info)
{
    size_t argc = 3;
    napi_value argv[3];
    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 3)
        return throw_type_error(env, "t38AdvanceInto(handle, samples, out)");
    size_t length;
    void *data;
    if (!get_uint8_array(env, argv[2], &data, &length))
        return throw_type_error(env, "out must be a Uint8Array");
    session_t *s = advance_t38_args(env, argv);
    if (s == NULL)
        return NULL;
    size_t needed = 4;
    int wide = 0;
    for (size_t i = 0; i < s->packets_len; i++) {
        needed += 4 + (size_t) s->packets[i].len;
        if (s->packets[i].len < 0 || s->packets[i].len > 0xFFFF || s->packets[i].count < 0 || s->packets[i].count > 0xFFFF)
            wide = 1;
    }
    if (wide || s->events_len > 0 || s->phase_e_seen || s->spandsp_done || needed > length || s->samples > UINT32_MAX)
        return make_int(env, -1);
    uint8_t *out = data;
    put_u32le(out, (uint32_t) s->samples);
    size_t at = 4;
    for (size_t i = 0; i < s->packets_len; i++) {
        const out_packet_t *p = &s->packets[i];
        out[at] = (uint8_t) p->len;
        out[at + 1] = (uint8_t) (p->len >> 8);
        out[at + 2] = (uint8_t) p->count;
        out[at + 3] = (uint8_t) (p->count >> 8);
        memcpy(out + at + 4, p->bytes, (size_t) p->len);
        at += 4 + (size_t) p->len;
    }
    napi_value n = make_int(env, (int64_t) s->packets_len);
    clear_packets(s);
    return n;
}

#define MAX_IFP_BYTES 2048

/* The arguments (handle, ifp, seq) of t38ReceiveIfp and t38ReceiveIfpAsync: the session, and the IFP
   copied into `copy` (spandsp only reads it, but a JS view onto shared memory could change under it,
   and a thread-pool call outlives the JS buffer), and the handle. Returns NULL with a JS exception pending. */
static session_t *read_ifp_args(napi_env env, napi_callback_info info, const char *usage, napi_value *handle, uint8_t copy[MAX_IFP_BYTES], int *len, uint16_t *seq_out)
{
    size_t argc = 3;
    napi_value argv[3];
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3) {
        throw_type_error(env, usage);
        return NULL;
    }
    session_t *s = get_session(env, argv[0], KIND_T38);
    if (s == NULL)
        return NULL;
    size_t length;
    void *data;
    if (!get_uint8_array(env, argv[1], &data, &length)) {
        throw_type_error(env, "ifp must be a Uint8Array");
        return NULL;
    }
    uint32_t seq;
    if (napi_get_value_uint32(env, argv[2], &seq) != napi_ok || seq > 0xFFFF) {
        throw_type_error(env, "seq must be a whole number from 0 to 65535");
        return NULL;
    }
    if (length > MAX_IFP_BYTES) {
        throw_type_error(env, "ifp is longer than 2048 bytes");
        return NULL;
    }
    memcpy(copy, data, length);
    *len = (int) length;
    *seq_out = (uint16_t) seq;
    *handle = argv[0];
    return s;
}

static napi_value t38_receive_ifp(napi_env env, napi_callback_info info)
{
    uint8_t copy[MAX_IFP_BYTES];
    int len;
    uint16_t seq;
    napi_value handle;
    session_t *s = read_ifp_args(env, info, "t38ReceiveIfp(handle, ifp, seq)", &handle, copy, &len, &seq);
    if (s == NULL)
        return NULL;
    t38_core_rx_ifp_packet(t38_terminal_get_t38_core_state(s->t38), copy, len, seq);
    return t38_step_result(env, s);
}

typedef struct {
    napi_async_work work;
    napi_deferred deferred;
    napi_ref handle_ref; /* keeps the handle (and so the session) from the GC while the work runs */
    session_t *s;
    int len;
    uint16_t seq;
    uint8_t ifp[MAX_IFP_BYTES];
} rx_work_t;

static void rx_execute(napi_env env, void *data)
{
    (void) env;
    rx_work_t *w = data;
    t38_core_rx_ifp_packet(t38_terminal_get_t38_core_state(w->s->t38), w->ifp, w->len, w->seq);
}

static void rx_complete(napi_env env, napi_status status, void *data)
{
    rx_work_t *w = data;
    session_t *s = w->s;
    s->busy = 0;
    napi_value settled = NULL;
    int ok = 0;
    if (s->free_pending) {
        release_session(s);
        s->free_pending = 0;
        napi_value message;
        if (napi_create_string_utf8(env, "the spandsp engine session was freed while it handled an IFP", NAPI_AUTO_LENGTH, &message) == napi_ok)
            napi_create_error(env, NULL, message, &settled);
    } else if (status != napi_ok) {
        napi_value message;
        if (napi_create_string_utf8(env, "the IFP could not be handled on libuv's thread pool", NAPI_AUTO_LENGTH, &message) == napi_ok)
            napi_create_error(env, NULL, message, &settled);
    } else {
        settled = t38_step_result(env, s);
        if (settled == NULL) {
            bool pending = false;
            napi_is_exception_pending(env, &pending);
            if (pending)
                napi_get_and_clear_last_exception(env, &settled);
        } else {
            ok = 1;
        }
    }
    if (settled == NULL)
        napi_get_undefined(env, &settled);
    if (ok)
        napi_resolve_deferred(env, w->deferred, settled);
    else
        napi_reject_deferred(env, w->deferred, settled);
    napi_delete_reference(env, w->handle_ref);
    napi_delete_async_work(env, w->work);
    free(w);
}

static napi_value t38_receive_ifp_async(napi_env env, napi_callback_info info)
{
    rx_work_t *w = calloc(1, sizeof(rx_work_t));
    if (w == NULL)
        return throw_type_error(env, "out of memory");
    /* The thread reads its own copy: the JS buffer may be reused or moved meanwhile. */
    napi_value handle;
    session_t *s = read_ifp_args(env, info, "t38ReceiveIfpAsync(handle, ifp, seq)", &handle, w->ifp, &w->len, &w->seq);
    if (s == NULL) {
        free(w);
        return NULL;
    }
    w->s = s;
    napi_value promise;
    napi_value name;
    if (napi_create_promise(env, &w->deferred, &promise) != napi_ok
        || napi_create_string_utf8(env, "spandspT38ReceiveIfp", NAPI_AUTO_LENGTH, &name) != napi_ok
        || napi_create_async_work(env, NULL, name, rx_execute, rx_complete, w, &w->work) != napi_ok) {
        free(w);
        napi_throw_error(env, "ERR_SPANDSP_ENGINE", "cannot start handling the IFP on libuv's thread pool");
        return NULL;
    }
    if (napi_create_reference(env, handle, 1, &w->handle_ref) != napi_ok) {
        napi_delete_async_work(env, w->work);
        free(w);
        napi_throw_error(env, "ERR_SPANDSP_ENGINE", "cannot start handling the IFP on libuv's thread pool");
        return NULL;
    }
    if (napi_queue_async_work(env, w->work) != napi_ok) {
        napi_delete_reference(env, w->handle_ref);
        napi_delete_async_work(env, w->work);
        free(w);
        napi_throw_error(env, "ERR_SPANDSP_ENGINE", "cannot queue the IFP on libuv's thread pool");
        return NULL;
    }
    s->busy = 1;
    return promise;
}

static napi_value audio_process(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2];
    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 2)
        return throw_type_error(env, "audioProcess(handle, rx)");
    session_t *s = get_session(env, argv[0], KIND_AUDIO);
    if (s == NULL)
        return NULL;

    int16_t rx[MAX_AUDIO_SAMPLES];
    int n = 0;
    int fill_in = 0;
    bool is_typed = false;
    NAPI_CALL(env, napi_is_typedarray(env, argv[1], &is_typed));
    if (is_typed) {
        napi_typedarray_type ta_type;
        size_t length;
        void *data;
        napi_value ab;
        size_t offset;
        NAPI_CALL(env, napi_get_typedarray_info(env, argv[1], &ta_type, &length, &data, &ab, &offset));
        if (ta_type != napi_int16_array || length == 0 || length > MAX_AUDIO_SAMPLES)
            return throw_type_error(env, "rx must be an Int16Array of 1 to 8000 samples, or a sample count");
        n = (int) length;
        /* fax_rx() filters the samples in place: work on a copy. */
        memcpy(rx, data, length * sizeof(int16_t));
    } else {
        int32_t count;
        if (napi_get_value_int32(env, argv[1], &count) != napi_ok || count <= 0 || count > MAX_AUDIO_SAMPLES)
            return throw_type_error(env, "rx must be an Int16Array of 1 to 8000 samples, or a sample count");
        n = count;
        fill_in = 1;
    }

    if (fill_in)
        fax_rx_fillin(s->fax, n);
    else
        fax_rx(s->fax, rx, n);

    napi_value audio_ab;
    void *tx_data = NULL;
    NAPI_CALL(env, napi_create_arraybuffer(env, (size_t) n * sizeof(int16_t), &tx_data, &audio_ab));
    int produced = fax_tx(s->fax, (int16_t *) tx_data, n);
    if (produced < n)
        memset((int16_t *) tx_data + produced, 0, (size_t) (n - produced) * sizeof(int16_t));
    s->samples += n;
    napi_value audio;
    NAPI_CALL(env, napi_create_typedarray(env, napi_int16_array, (size_t) n, audio_ab, 0, &audio));

    napi_value obj;
    NAPI_CALL(env, napi_create_object(env, &obj));
    napi_value events = drain_events(env, s);
    if (events == NULL)
        return NULL;
    if (!set_prop(env, obj, "audio", audio) || !set_prop(env, obj, "events", events)
        || !set_prop(env, obj, "finished", make_bool(env, s->phase_e_seen))
        || !set_prop(env, obj, "samples", make_int(env, s->samples)))
        return NULL;
    return obj;
}

static const char *encoding_name(int encoding)
{
    switch (encoding) {
    case T4_COMPRESSION_ITU_T4_1D:
        return "T.4 1-D";
    case T4_COMPRESSION_ITU_T4_2D:
        return "T.4 2-D";
    case T4_COMPRESSION_ITU_T6:
        return "T.6";
    case T4_COMPRESSION_ITU_T85:
        return "T.85";
    case T4_COMPRESSION_ITU_T85_L0:
        return "T.85 L0";
    case T4_COMPRESSION_NONE:
        return "none";
    }
    return "unknown";
}

static napi_value statistics(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1)
        return throw_type_error(env, "statistics(handle)");
    session_t *s = get_session(env, argv[0], 0);
    if (s == NULL)
        return NULL;
    t30_stats_t live;
    t30_get_transfer_statistics(s->t30, &live);
    if (live.width > 0) {
        s->last_page = live;
        s->have_last_page = 1;
    }
    const t30_stats_t *page = s->have_last_page ? &s->last_page : &live;

    napi_value obj;
    NAPI_CALL(env, napi_create_object(env, &obj));
    if (!set_prop(env, obj, "pagesTx", make_int(env, live.pages_tx)) || !set_prop(env, obj, "pagesRx", make_int(env, live.pages_rx))
        || !set_prop(env, obj, "pagesInFile", make_int(env, page->pages_in_file))
        || !set_prop(env, obj, "bitRate", make_int(env, live.bit_rate))
        || !set_prop(env, obj, "ecm", make_bool(env, live.error_correcting_mode))
        || !set_prop(env, obj, "ecmRetries", make_int(env, live.error_correcting_mode_retries))
        || !set_prop(env, obj, "encoding", make_string(env, encoding_name(page->encoding)))
        || !set_prop(env, obj, "width", make_int(env, page->width)) || !set_prop(env, obj, "length", make_int(env, page->length))
        || !set_prop(env, obj, "xResolution", make_int(env, page->x_resolution))
        || !set_prop(env, obj, "yResolution", make_int(env, page->y_resolution))
        || !set_prop(env, obj, "imageBytes", make_int(env, page->image_size))
        || !set_prop(env, obj, "badRows", make_int(env, page->bad_rows))
        || !set_prop(env, obj, "longestBadRowRun", make_int(env, page->longest_bad_row_run))
        || !set_prop(env, obj, "currentStatus", make_int(env, live.current_status))
        || !set_prop(env, obj, "remoteIdent", make_string(env, t30_get_rx_ident(s->t30)))
        || !set_prop(env, obj, "localIdent", make_string(env, t30_get_tx_ident(s->t30)))
        || !set_prop(env, obj, "samples", make_int(env, s->samples)))
        return NULL;
    return obj;
}

static napi_value free_session(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1)
        return throw_type_error(env, "free(handle)");
    napi_valuetype type;
    NAPI_CALL(env, napi_typeof(env, argv[0], &type));
    if (type != napi_external)
        return throw_type_error(env, "expected a spandsp engine session handle");
    session_t *s = NULL;
    NAPI_CALL(env, napi_get_value_external(env, argv[0], (void **) &s));
    /* Idempotent; the struct itself goes with the handle's finalizer. A session busy on the
       thread pool is released when that work ends (rx_complete). */
    if (s != NULL && s->busy)
        s->free_pending = 1;
    else if (s != NULL)
        release_session(s);
    napi_value undefined;
    NAPI_CALL(env, napi_get_undefined(env, &undefined));
    return undefined;
}

/* ---- uncompressed copies of fax TIFFs --------------------------------------------------------- */

typedef struct {
    napi_async_work work;
    napi_deferred deferred;
    char *src;
    char *dst;
    double max_bytes;
    int pages;
    char error[256];
} uncompress_work_t;

/* Copies every page of `src` into `dst` with the same geometry, resolution and page tags, its
   rows uncompressed. Returns the page count, or -1 with `error` set. */
static int uncompress_tiff(const char *src, const char *dst, double max_bytes, char *error, size_t error_len)
{
    TIFF *in = TIFFOpen(src, "r");
    if (in == NULL) {
        snprintf(error, error_len, "cannot open %s as a TIFF file", src);
        return -1;
    }
    double total = 0;
    do {
        uint32_t width = 0, length = 0;
        TIFFGetField(in, TIFFTAG_IMAGEWIDTH, &width);
        TIFFGetField(in, TIFFTAG_IMAGELENGTH, &length);
        total += (double) (((uint64_t) width + 7) / 8) * (double) length;
    } while (TIFFReadDirectory(in));
    if (total > max_bytes || !TIFFSetDirectory(in, 0)) {
        TIFFClose(in);
        return 0;
    }
    TIFF *out = TIFFOpen(dst, "w");
    if (out == NULL) {
        TIFFClose(in);
        snprintf(error, error_len, "cannot create %s", dst);
        return -1;
    }
    int pages = 0;
    uint8_t *row = NULL;
    do {
        uint32_t width = 0, length = 0;
        uint16_t bits = 1, samples = 1, photometric = PHOTOMETRIC_MINISWHITE, unit = RESUNIT_INCH, page = 0, page_count = 0;
        float x_res = 0, y_res = 0;
        TIFFGetField(in, TIFFTAG_IMAGEWIDTH, &width);
        TIFFGetField(in, TIFFTAG_IMAGELENGTH, &length);
        TIFFGetFieldDefaulted(in, TIFFTAG_BITSPERSAMPLE, &bits);
        TIFFGetFieldDefaulted(in, TIFFTAG_SAMPLESPERPIXEL, &samples);
        TIFFGetField(in, TIFFTAG_PHOTOMETRIC, &photometric);
        int has_x_res = TIFFGetField(in, TIFFTAG_XRESOLUTION, &x_res);
        int has_y_res = TIFFGetField(in, TIFFTAG_YRESOLUTION, &y_res);
        TIFFGetFieldDefaulted(in, TIFFTAG_RESOLUTIONUNIT, &unit);
        int has_page_number = TIFFGetField(in, TIFFTAG_PAGENUMBER, &page, &page_count);
        if (bits != 1 || samples != 1 || width == 0 || length == 0) {
            snprintf(error, error_len, "page %d of %s is not a bilevel image", pages + 1, src);
            pages = -1;
            break;
        }
        TIFFSetField(out, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
        TIFFSetField(out, TIFFTAG_IMAGEWIDTH, width);
        TIFFSetField(out, TIFFTAG_IMAGELENGTH, length);
        TIFFSetField(out, TIFFTAG_BITSPERSAMPLE, 1);
        TIFFSetField(out, TIFFTAG_SAMPLESPERPIXEL, 1);
        TIFFSetField(out, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
        TIFFSetField(out, TIFFTAG_PHOTOMETRIC, photometric);
        TIFFSetField(out, TIFFTAG_FILLORDER, FILLORDER_MSB2LSB);
        TIFFSetField(out, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
        /* Resolution tags only as the source has them: SpanDSP reads a file without them as standard. */
        if (has_x_res)
            TIFFSetField(out, TIFFTAG_XRESOLUTION, x_res);
        if (has_y_res)
            TIFFSetField(out, TIFFTAG_YRESOLUTION, y_res);
        TIFFSetField(out, TIFFTAG_RESOLUTIONUNIT, unit);
        TIFFSetField(out, TIFFTAG_ROWSPERSTRIP, length);
        if (has_page_number)
            TIFFSetField(out, TIFFTAG_PAGENUMBER, page, page_count);
        tmsize_t size = TIFFScanlineSize(in);
        uint8_t *grown = realloc(row, (size_t) size);
        if (grown == NULL) {
            snprintf(error, error_len, "out of memory");
            pages = -1;
            break;
        }
        row = grown;
        for (uint32_t y = 0; y < length; y++) {
            if (TIFFReadScanline(in, row, y, 0) < 0) {
                snprintf(error, error_len, "page %d of %s cannot be decoded (row %u)", pages + 1, src, y);
                pages = -1;
                break;
            }
            if (TIFFWriteScanline(out, row, y, 0) < 0) {
                snprintf(error, error_len, "cannot write %s", dst);
                pages = -1;
                break;
            }
        }
        if (pages < 0)
            break;
        if (!TIFFWriteDirectory(out)) {
            snprintf(error, error_len, "cannot write %s", dst);
            pages = -1;
            break;
        }
        pages++;
    } while (TIFFReadDirectory(in));
    free(row);
    TIFFClose(in);
    TIFFClose(out);
    if (pages < 0)
        remove(dst);
    return pages;
}

static void uncompress_execute(napi_env env, void *data)
{
    (void) env;
    uncompress_work_t *w = data;
    w->pages = uncompress_tiff(w->src, w->dst, w->max_bytes, w->error, sizeof(w->error));
}

static void uncompress_complete(napi_env env, napi_status status, void *data)
{
    uncompress_work_t *w = data;
    napi_value value = NULL;
    if (status == napi_ok && w->pages >= 0) {
        napi_create_int32(env, w->pages, &value);
        napi_resolve_deferred(env, w->deferred, value);
    } else {
        napi_value message;
        napi_create_string_utf8(env, status == napi_ok ? w->error : "the TIFF file could not be converted on libuv's thread pool", NAPI_AUTO_LENGTH, &message);
        napi_create_error(env, NULL, message, &value);
        napi_reject_deferred(env, w->deferred, value);
    }
    napi_delete_async_work(env, w->work);
    free(w->src);
    free(w->dst);
    free(w);
}

static char *string_arg(napi_env env, napi_value value)
{
    size_t len = 0;
    if (napi_get_value_string_utf8(env, value, NULL, 0, &len) != napi_ok)
        return NULL;
    char *text = malloc(len + 1);
    if (text != NULL && napi_get_value_string_utf8(env, value, text, len + 1, &len) != napi_ok) {
        free(text);
        return NULL;
    }
    return text;
}

static napi_value uncompress_tiff_async(napi_env env, napi_callback_info info)
{
    size_t argc = 3;
    napi_value argv[3];
    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 3)
        return throw_type_error(env, "uncompressTiff(src, dst, maxBytes)");
    double max_bytes;
    if (napi_get_value_double(env, argv[2], &max_bytes) != napi_ok || !(max_bytes >= 0))
        return throw_type_error(env, "maxBytes must be a number >= 0");
    uncompress_work_t *w = calloc(1, sizeof(uncompress_work_t));
    if (w == NULL)
        return throw_type_error(env, "out of memory");
    w->max_bytes = max_bytes;
    w->src = string_arg(env, argv[0]);
    w->dst = string_arg(env, argv[1]);
    napi_value promise;
    napi_value name;
    if (w->src == NULL || w->dst == NULL) {
        free(w->src);
        free(w->dst);
        free(w);
        return throw_type_error(env, "uncompressTiff(src, dst) takes two paths");
    }
    if (napi_create_promise(env, &w->deferred, &promise) != napi_ok
        || napi_create_string_utf8(env, "spandspUncompressTiff", NAPI_AUTO_LENGTH, &name) != napi_ok
        || napi_create_async_work(env, NULL, name, uncompress_execute, uncompress_complete, w, &w->work) != napi_ok) {
        free(w->src);
        free(w->dst);
        free(w);
        napi_throw_error(env, "ERR_SPANDSP_ENGINE", "cannot start converting the TIFF file on libuv's thread pool");
        return NULL;
    }
    NAPI_CALL(env, napi_queue_async_work(env, w->work));
    return promise;
}

static napi_value completion_code_text(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    int32_t code;
    if (argc < 1 || napi_get_value_int32(env, argv[0], &code) != napi_ok)
        return throw_type_error(env, "completionCodeText(code)");
    return make_string(env, t30_completion_code_to_str(code));
}

static napi_value frame_name(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    int32_t fcf;
    if (argc < 1 || napi_get_value_int32(env, argv[0], &fcf) != napi_ok || fcf < 0 || fcf > 255)
        return throw_type_error(env, "frameName(fcf)");
    return make_string(env, t30_frametype((uint8_t) fcf));
}

static napi_value init(napi_env env, napi_value exports)
{
    /* libtiff prints its errors and warnings on stderr by default; a library inside a service must
       not. A file SpanDSP cannot read ends the call with T30_ERR_FILEERROR/BADTIFF instead. */
    TIFFSetErrorHandler(NULL);
    TIFFSetWarningHandler(NULL);
    napi_property_descriptor props[] = {
        {"t38Create", NULL, t38_create, NULL, NULL, NULL, napi_enumerable, NULL},
        {"audioCreate", NULL, audio_create, NULL, NULL, NULL, napi_enumerable, NULL},
        {"t38Advance", NULL, t38_advance, NULL, NULL, NULL, napi_enumerable, NULL},
        {"t38ReceiveIfp", NULL, t38_receive_ifp, NULL, NULL, NULL, napi_enumerable, NULL},
        {"t38AdvanceInto", NULL, t38_advance_into, NULL, NULL, NULL, napi_enumerable, NULL},
        {"t38ReceiveIfpAsync", NULL, t38_receive_ifp_async, NULL, NULL, NULL, napi_enumerable, NULL},
        {"audioProcess", NULL, audio_process, NULL, NULL, NULL, napi_enumerable, NULL},
        {"statistics", NULL, statistics, NULL, NULL, NULL, napi_enumerable, NULL},
        {"free", NULL, free_session, NULL, NULL, NULL, napi_enumerable, NULL},
        {"uncompressTiff", NULL, uncompress_tiff_async, NULL, NULL, NULL, napi_enumerable, NULL},
        {"completionCodeText", NULL, completion_code_text, NULL, NULL, NULL, napi_enumerable, NULL},
        {"frameName", NULL, frame_name, NULL, NULL, NULL, napi_enumerable, NULL},
    };
    NAPI_CALL(env, napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props));
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
