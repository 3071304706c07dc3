/*
 * t38_receiver: a T.38 fax RECEIVER over UDPTL/UDP, built on Debian's libspandsp 0.0.6. It is the
 * far end of Faxline's interop tests (test/interop/t38-spandsp.test.ts): a separate process, with
 * its own UDPTL code, so the sender under test shares nothing with it but the wire.
 *
 * What it does: it binds a UDP socket, waits for the first datagram (it is the answering side),
 * then runs a spandsp T.38 terminal that receives into a TIFF file, on a virtual clock that starts
 * with that first datagram and runs SPEED times faster than real time. Both ends must run at the
 * same speed. When phase E comes it keeps ticking for 2 s of virtual time (so its DCN repeats go
 * out), prints one line
 *     RESULT {"code":0,"text":"OK","pages_rx":2,...}
 * on stdout and exits 0 if the completion code is T30_ERR_OK, 1 otherwise (2 for usage errors,
 * 3 if a watchdog or SIGTERM/SIGINT ended the call before phase E; the RESULT line then carries
 * the code SpanDSP gives a call cut short, usually T30_ERR_CALLDROPPED).
 *
 * Before that it prints "LISTENING <port>" on stdout as soon as the socket is bound, so a test
 * can ask for port 0 and read the port back.
 *
 * UDPTL (T.38 Annex A, ALIGNED PER): seq (2 bytes), primary IFP (length determinant + bytes),
 * then error recovery: 0x00 + count + secondary IFPs newest first (what we send), or FEC
 * (parsed on receive, only the primary is used). Missing packets are recovered from the
 * secondaries of the next packet that arrives; duplicates and late packets are dropped.
 *
 * With -L both ends share one virtual clock in lockstep instead of each pacing itself by the wall
 * clock (then -s is not used): the test drives it tick by tick over stdin and stdout. Each line
 * "STEP <n>" on stdin says that the test's side has sent <n> datagrams in all so far; the harness
 * waits until it has received that many (or fails after 10 s of wall time), handles them, runs its
 * terminal for one 20 ms tick, and answers "STEPPED <m>" on stdout, <m> being the datagrams it has
 * sent in all (those its -x loss dropped not counted). The test then waits for those <m>, runs its
 * own tick, and so on: each side hears what the other sent in a tick before its next tick, so a
 * run is the same on every machine however loaded. At the end of stdin the harness runs on alone,
 * as fast as it can, until phase E and its linger or the virtual watchdog.
 *
 * With -n COUNT it runs COUNT such calls at once in this one process, each on its own socket and
 * its own clock, all on one event loop (epoll): one process per call made the peers of
 * `npm run bench:lines` wake 500 processes every 20 ms, and the peers' core, not Faxline, was the
 * limit. It then prints "LISTENING <port0> <port1> ...", one RESULT line per call as that call
 * ends, each with "session":<i> and "exit":<the exit code that call alone would have>, and exits
 * 0 when every call did, else the highest of their codes. Call <i> receives into <file>.<i> (or
 * sends the same -t file), says <ident>-<i> and seeds its loss with SEED + <i>. In lockstep the
 * lines are "STEP <i> <n>" and "STEPPED <i> <m>", and "END <i>" lets call <i> run on alone (once
 * its STEPs are answered; STEPs sent ahead, up to 64, are answered in order); in either mode
 * "STOP <i>" on stdin ends call <i> at once (code 3), as SIGTERM ends them all. The calls share
 * the process's wall-clock watchdog (-W), which lockstep does not use.
 *
 * With -t it is a T.38 SENDER instead (the calling terminal: CNG, then DCS, pages, EOP), for the
 * tests where Faxline receives (test/interop/sip-reception-sipp.test.ts): it still waits for the
 * first datagram (Faxline, the answering side, sends its CED and DIS first) and starts its clock
 * with it. The RESULT line then also carries "pages_tx", and each page the receiver confirms
 * (MCF) prints "CONFIRMED <session> <pages_tx>" the moment the MCF arrives. It sends its file's pages in the size and
 * resolution they have (A4, B4 or A3 wide; standard, fine, superfine, 300 or 400 dpi) when the
 * receiver's DIS allows them, and fails with the T.30 code that says why when not.
 *
 * Usage: t38_receiver -f rx.tif | -t tx.tif [-l HOST:PORT] [-r HOST:PORT] [-s SPEED] [-e] [-R DEPTH] [-x LOSS%]
 *                     [-S SEED] [-V VERSION] [-M MAXDATAGRAM] [-i IDENT] [-T VIRTUAL_S] [-W WALL_S]
 *                     [-P] [-C MH[,MR[,MMR]]] [-L] [-n COUNT] [-d]
 *   -f  receive into this TIFF file
 *   -t  send this TIFF-F file (calling terminal) instead of receiving
 *   -l  local address (default 127.0.0.1:0: any free port)
 *   -r  remote address (default: the source of the first datagram)
 *   -s  virtual clock multiplier (default 1: real time)
 *   -e  offer ECM (default: no ECM)
 *   -R  redundancy depth: secondary IFPs per datagram (default 0)
 *   -x  simulated loss of our transmitted datagrams, percent (default 0)
 *   -S  seed of the loss generator (default 1)
 *   -V  T.38 version 0-3 (default 0)
 *   -M  largest datagram we send, bytes (default 400); redundancy is trimmed to fit
 *   -i  our CSID (default "FAXLINE-TEST-RX")
 *   -T  watchdog in virtual seconds (default 600)
 *   -W  watchdog in wall seconds, also for waiting for the first datagram (default 120; not in
 *       lockstep, where each step has its own 10 s)
 *   -P  no pacing (spandsp T38_TERMINAL_OPTION_NO_PACING)
 *   -C  compressions offered in our DIS, e.g. MH or MH,MR or MH,MR,MMR (default: all three)
 *   -L  lockstep with the test over stdin/stdout (see above)
 *   -n  run COUNT calls in this process (default 1; see above)
 *   -d  spandsp FLOW logs on stderr
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <tiffio.h>
#include <spandsp.h>

#define SAMPLES_PER_TICK 160
#define MAX_IFP 1024
#define MAX_DEPTH 8
#define MAX_DATAGRAM 2048
#define MAX_SESSIONS 4096
/* Ticks a call that runs on alone after its lockstep may take per turn of the loop, so that one
   such call does not hold up the others. */
#define FREE_RUN_TICKS 50
/* STEPs a call may have sent ahead, not yet answered. */
#define MAX_PENDING_STEPS 64
/* The epoll data of stdin and of the timer (a call's is its index). */
#define STDIN_EVENT UINT32_MAX
#define TIMER_EVENT (UINT32_MAX - 1)

/* ---- options and state ----------------------------------------------------------------------- */

static struct {
    const char *rx_file;
    const char *tx_file;
    struct sockaddr_in local;
    struct sockaddr_in remote;
    int have_remote;
    double speed;
    int ecm;
    int depth;
    double loss_pct;
    uint32_t seed;
    int version;
    int max_datagram;
    const char *ident;
    double watchdog_virtual_s;
    double watchdog_wall_s;
    int no_pacing;
    int compressions;
    int lockstep;
    int count;
    int debug;
} opt;

/* How a call is paced: by the wall clock, stepped by the test, or (after the test's END) as fast
   as it can. */
enum pacing { PACE_WALL, PACE_STEPPED, PACE_FREE };

/* One call: its socket, its SpanDSP terminal, its clock and its UDPTL state. */
typedef struct {
    int index;
    int sock;
    char rx_file[PATH_MAX];
    char ident[128];
    struct sockaddr_in remote;
    int have_remote;
    t38_terminal_state_t *terminal;
    t30_state_t *t30;
    int64_t samples;
    int phase_e_code;
    int64_t phase_e_at;
    t30_stats_t last_page;
    int have_last_page;
    uint32_t rng_state;
    /* PACE_WALL: the wall time of the first datagram, -1 before it. */
    double started;
    enum pacing pacing;
    /* PACE_STEPPED: the STEPs not yet answered, in order (each the datagrams in all it waits
       for), the first waiting since step_since. */
    long steps[MAX_PENDING_STEPS];
    int step_head, step_pending;
    double step_since;
    /* END (or the end of stdin) came: once its STEPs are answered the call runs on alone. */
    int end_requested;
    int done;
    int exit_code;
    struct {
        uint16_t tx_seq;
        uint8_t history[MAX_DEPTH][MAX_IFP];
        int history_len[MAX_DEPTH];
        int history_count;
        int rx_started;
        uint16_t rx_expected;
        long tx_datagrams, tx_dropped, tx_trimmed, tx_sent;
        long rx_datagrams, rx_recovered, rx_lost, rx_duplicates, rx_fec, rx_malformed;
    } udptl;
} session_t;

static session_t *sessions;
static int live_sessions;
static double launched;
static volatile sig_atomic_t stop_requested;

static void request_stop(int signo)
{
    stop_requested = 1;
}

static uint32_t rng_next(session_t *s)
{
    /* xorshift32 */
    uint32_t x = s->rng_state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s->rng_state = x;
    return x;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void hex(FILE *f, const uint8_t *b, int len)
{
    for (int i = 0; i < len; i++)
        fprintf(f, "%02X", b[i]);
}

/* The prefix of a log line: the call's virtual time, and its index when there are several. */
static void log_prefix(const session_t *s)
{
    if (opt.count > 1)
        fprintf(stderr, "[%d] ", s->index);
    fprintf(stderr, "%8.2f ", s->samples / 8000.0);
}

/* ---- UDPTL ----------------------------------------------------------------------------------- */

static int put_length(uint8_t *buf, int at, int len)
{
    if (len < 0x80) {
        buf[at] = (uint8_t) len;
        return 1;
    }
    if (len < 0x4000) {
        buf[at] = (uint8_t) (0x80 | (len >> 8));
        buf[at + 1] = (uint8_t) (len & 0xFF);
        return 2;
    }
    return -1;
}

/* Returns the number of bytes the determinant took, or -1. */
static int get_length(const uint8_t *buf, int len, int at, int *value)
{
    if (at >= len)
        return -1;
    if ((buf[at] & 0x80) == 0) {
        *value = buf[at];
        return 1;
    }
    if ((buf[at] & 0xC0) == 0x80) {
        if (at + 1 >= len)
            return -1;
        *value = ((buf[at] & 0x3F) << 8) | buf[at + 1];
        return 2;
    }
    return -1; /* fragmented lengths: never used for IFPs */
}

static int encode_datagram(const session_t *s, uint8_t *out, uint16_t seq, const uint8_t *ifp, int ifp_len, int secondaries)
{
    int at = 0;
    out[at++] = (uint8_t) (seq >> 8);
    out[at++] = (uint8_t) (seq & 0xFF);
    at += put_length(out, at, ifp_len);
    memcpy(out + at, ifp, (size_t) ifp_len);
    at += ifp_len;
    out[at++] = 0x00; /* error-recovery: secondary-ifp-packets */
    at += put_length(out, at, secondaries);
    for (int i = 0; i < secondaries; i++) {
        /* history[0] is the newest */
        at += put_length(out, at, s->udptl.history_len[i]);
        memcpy(out + at, s->udptl.history[i], (size_t) s->udptl.history_len[i]);
        at += s->udptl.history_len[i];
    }
    return at;
}

static void send_datagram(session_t *s, const uint8_t *buf, int len)
{
    s->udptl.tx_datagrams++;
    if (opt.loss_pct > 0 && (rng_next(s) % 100000) < (uint32_t) (opt.loss_pct * 1000)) {
        s->udptl.tx_dropped++;
        return;
    }
    if (!s->have_remote)
        return;
    s->udptl.tx_sent++;
    if (sendto(s->sock, buf, (size_t) len, 0, (struct sockaddr *) &s->remote, sizeof(s->remote)) < 0 && opt.debug)
        fprintf(stderr, "sendto: %s\n", strerror(errno));
}

static int tx_packet_handler(t38_core_state_t *core, void *user_data, const uint8_t *ifp, int len, int count)
{
    session_t *s = user_data;
    uint8_t out[MAX_DATAGRAM + MAX_DEPTH * MAX_IFP];
    if (len > MAX_IFP)
        return -1;
    int secondaries = opt.depth < s->udptl.history_count ? opt.depth : s->udptl.history_count;
    int n = encode_datagram(s, out, s->udptl.tx_seq, ifp, len, secondaries);
    while (n > opt.max_datagram && secondaries > 0) {
        secondaries--;
        s->udptl.tx_trimmed++;
        n = encode_datagram(s, out, s->udptl.tx_seq, ifp, len, secondaries);
    }
    for (int i = 0; i < count; i++)
        send_datagram(s, out, n);
    s->udptl.tx_seq++;
    memmove(&s->udptl.history[1], &s->udptl.history[0], sizeof(s->udptl.history[0]) * (MAX_DEPTH - 1));
    memmove(&s->udptl.history_len[1], &s->udptl.history_len[0], sizeof(s->udptl.history_len[0]) * (MAX_DEPTH - 1));
    memcpy(s->udptl.history[0], ifp, (size_t) len);
    s->udptl.history_len[0] = len;
    if (s->udptl.history_count < MAX_DEPTH)
        s->udptl.history_count++;
    return 0;
}

static void deliver(session_t *s, const uint8_t *ifp, int len, uint16_t seq)
{
    t38_core_rx_ifp_packet(t38_terminal_get_t38_core_state(s->terminal), ifp, len, seq);
}

static void receive_datagram(session_t *s, const uint8_t *buf, int len)
{
    s->udptl.rx_datagrams++;
    if (len < 3) {
        s->udptl.rx_malformed++;
        return;
    }
    uint16_t seq = (uint16_t) ((buf[0] << 8) | buf[1]);
    int at = 2;
    int primary_len;
    int k = get_length(buf, len, at, &primary_len);
    if (k < 0 || at + k + primary_len > len) {
        s->udptl.rx_malformed++;
        return;
    }
    at += k;
    const uint8_t *primary = buf + at;
    at += primary_len;

    const uint8_t *secondary[16];
    int secondary_len[16];
    int n_secondary = 0;
    if (at < len) {
        if (buf[at] == 0x00) {
            at++;
            int count;
            k = get_length(buf, len, at, &count);
            if (k < 0) {
                s->udptl.rx_malformed++;
                return;
            }
            at += k;
            for (int i = 0; i < count; i++) {
                int l;
                k = get_length(buf, len, at, &l);
                if (k < 0 || at + k + l > len) {
                    s->udptl.rx_malformed++;
                    return;
                }
                at += k;
                if (n_secondary < 16) {
                    secondary[n_secondary] = buf + at;
                    secondary_len[n_secondary] = l;
                    n_secondary++;
                }
                at += l;
            }
        } else {
            s->udptl.rx_fec++; /* FEC: use the primary only */
        }
    }

    if (!s->udptl.rx_started) {
        s->udptl.rx_started = 1;
        s->udptl.rx_expected = seq;
    }
    uint16_t ahead = (uint16_t) (seq - s->udptl.rx_expected);
    if (ahead >= 0x8000) {
        s->udptl.rx_duplicates++; /* late or repeated */
        return;
    }
    /* Recover the gap, oldest first: secondary[i] carries seq - 1 - i. */
    for (int gap = ahead; gap >= 1; gap--) {
        uint16_t missing = (uint16_t) (seq - gap);
        if (gap - 1 < n_secondary) {
            deliver(s, secondary[gap - 1], secondary_len[gap - 1], missing);
            s->udptl.rx_recovered++;
        } else {
            s->udptl.rx_lost++;
        }
    }
    deliver(s, primary, primary_len, seq);
    s->udptl.rx_expected = (uint16_t) (seq + 1);
}

/* ---- T.30 events ------------------------------------------------------------------------------ */

static void snapshot_page(session_t *s)
{
    t30_stats_t stats;
    t30_get_transfer_statistics(s->t30, &stats);
    if (stats.width > 0) {
        s->last_page = stats;
        s->have_last_page = 1;
    }
}

static void real_time_frame_handler(t30_state_t *t30, void *user_data, int incoming, const uint8_t msg[], int len)
{
    session_t *s = user_data;
    if (len < 3 || msg[2] == T4_FCD || msg[2] == T4_RCP)
        return;
    log_prefix(s);
    fprintf(stderr, "%s %-4s ", incoming ? "<-" : "->", t30_frametype(msg[2]));
    hex(stderr, msg, len);
    fputc('\n', stderr);
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
    }
    return "unknown";
}

static int phase_b_handler(t30_state_t *t30, void *user_data, int result)
{
    session_t *s = user_data;
    log_prefix(s);
    fprintf(stderr, "Phase B: %s remote-ident=\"%s\"\n", t30_frametype((uint8_t) result), t30_get_rx_ident(t30));
    return T30_ERR_OK;
}

static int phase_d_handler(t30_state_t *t30, void *user_data, int result)
{
    session_t *s = user_data;
    snapshot_page(s);
    t30_stats_t t;
    t30_get_transfer_statistics(t30, &t);
    log_prefix(s);
    fprintf(stderr, "Phase D: %s pages_rx=%d rate=%d ecm=%d enc=%s size=%dx%d res=%dx%d bad_rows=%d\n", t30_frametype((uint8_t) result), t.pages_rx,
            t.bit_rate, t.error_correcting_mode, encoding_name(t.encoding), t.width, t.length, t.x_resolution, t.y_resolution, t.bad_rows);
    /* A sender's phase D carries the receiver's answer to a page: "CONFIRMED <session> <pages_tx>"
       on stdout when it is MCF, so that a test can act the moment the far end has confirmed a page. */
    if (opt.tx_file != NULL && result == T30_MCF) {
        printf("CONFIRMED %d %d\n", s->index, t.pages_tx);
        fflush(stdout);
    }
    return T30_ERR_OK;
}

static void phase_e_handler(t30_state_t *t30, void *user_data, int completion_code)
{
    session_t *s = user_data;
    s->phase_e_code = completion_code;
    s->phase_e_at = s->samples;
    log_prefix(s);
    fprintf(stderr, "Phase E: %d %s\n", completion_code, t30_completion_code_to_str(completion_code));
}

/* ---- output ---------------------------------------------------------------------------------- */

static void json_string(const char *text)
{
    putchar('"');
    for (; text && *text; text++) {
        unsigned char c = (unsigned char) *text;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void print_result(const session_t *s, double wall_s)
{
    t30_stats_t t;
    t30_get_transfer_statistics(s->t30, &t);
    const t30_stats_t *page = s->have_last_page ? &s->last_page : &t;
    printf("RESULT {\"session\":%d,\"exit\":%d,\"code\":%d,\"text\":", s->index, s->exit_code, s->phase_e_code);
    json_string(s->phase_e_code >= 0 ? t30_completion_code_to_str(s->phase_e_code) : "no phase E (watchdog)");
    printf(",\"pages_tx\":%d,\"pages_rx\":%d,\"bit_rate\":%d,\"ecm\":%d,\"encoding\":\"%s\",\"width\":%d,\"length\":%d,\"x_resolution\":%d,"
           "\"y_resolution\":%d,\"bad_rows\":%d,\"remote_ident\":",
           t.pages_tx, t.pages_rx, t.bit_rate, t.error_correcting_mode, encoding_name(page->encoding), page->width, page->length, page->x_resolution,
           page->y_resolution, page->bad_rows);
    json_string(t30_get_rx_ident(s->t30));
    printf(",\"local_ident\":");
    json_string(s->ident);
    printf(",\"virtual_s\":%.2f,\"wall_s\":%.3f,\"speed\":%g,\"udptl\":{\"tx_datagrams\":%ld,\"tx_dropped\":%ld,\"tx_trimmed\":%ld,"
           "\"rx_datagrams\":%ld,\"rx_recovered\":%ld,\"rx_lost\":%ld,\"rx_duplicates\":%ld,\"rx_fec\":%ld,\"rx_malformed\":%ld}}\n",
           s->samples / 8000.0, wall_s, opt.speed, s->udptl.tx_datagrams, s->udptl.tx_dropped, s->udptl.tx_trimmed, s->udptl.rx_datagrams,
           s->udptl.rx_recovered, s->udptl.rx_lost, s->udptl.rx_duplicates, s->udptl.rx_fec, s->udptl.rx_malformed);
    fflush(stdout);
}

/* ---- a call ---------------------------------------------------------------------------------- */

static int parse_addr(const char *text, struct sockaddr_in *out)
{
    char host[64];
    const char *colon = strrchr(text, ':');
    if (colon == NULL || (size_t) (colon - text) >= sizeof(host))
        return -1;
    memcpy(host, text, (size_t) (colon - text));
    host[colon - text] = '\0';
    memset(out, 0, sizeof(*out));
    out->sin_family = AF_INET;
    out->sin_port = htons((uint16_t) atoi(colon + 1));
    return inet_pton(AF_INET, host, &out->sin_addr) == 1 ? 0 : -1;
}

/* Binds call i's socket (the -l port plus i, or any free port) and sets up its terminal. */
static int open_session(session_t *s, int i)
{
    memset(s, 0, sizeof(*s));
    s->index = i;
    s->phase_e_code = -1;
    s->phase_e_at = -1;
    s->started = -1;
    s->pacing = opt.lockstep ? PACE_STEPPED : PACE_WALL;
    s->rng_state = opt.seed + (uint32_t) i ? opt.seed + (uint32_t) i : 1;
    s->remote = opt.remote;
    s->have_remote = opt.have_remote;
    if (opt.count > 1) {
        snprintf(s->ident, sizeof(s->ident), "%s-%d", opt.ident, i);
        if (opt.rx_file != NULL)
            snprintf(s->rx_file, sizeof(s->rx_file), "%s.%d", opt.rx_file, i);
    } else {
        snprintf(s->ident, sizeof(s->ident), "%s", opt.ident);
        if (opt.rx_file != NULL)
            snprintf(s->rx_file, sizeof(s->rx_file), "%s", opt.rx_file);
    }

    struct sockaddr_in local = opt.local;
    if (ntohs(local.sin_port) != 0)
        local.sin_port = htons((uint16_t) (ntohs(local.sin_port) + i));
    s->sock = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    if (s->sock < 0 || bind(s->sock, (struct sockaddr *) &local, sizeof(local)) < 0) {
        fprintf(stderr, "cannot bind: %s\n", strerror(errno));
        return -1;
    }

    s->terminal = t38_terminal_init(NULL, opt.tx_file != NULL, tx_packet_handler, s);
    s->t30 = t38_terminal_get_t30_state(s->terminal);
    t38_core_state_t *core = t38_terminal_get_t38_core_state(s->terminal);
    t38_terminal_set_config(s->terminal, opt.no_pacing ? T38_TERMINAL_OPTION_NO_PACING : 0);
    t38_set_t38_version(core, opt.version);
    t38_set_max_datagram_size(core, opt.max_datagram);
    t30_set_tx_ident(s->t30, s->ident);
    if (opt.tx_file != NULL) {
        t30_set_tx_file(s->t30, opt.tx_file, -1, -1);
        /* A sender sends what its file holds (SpanDSP checks the far end's DIS for the width, and
           its own settings for the resolution): every size and resolution T.30 has for R8/R16. */
        t30_set_supported_resolutions(s->t30, T30_SUPPORT_STANDARD_RESOLUTION | T30_SUPPORT_FINE_RESOLUTION | T30_SUPPORT_SUPERFINE_RESOLUTION
                                              | T30_SUPPORT_R8_RESOLUTION | T30_SUPPORT_R16_RESOLUTION | T30_SUPPORT_300_300_RESOLUTION
                                              | T30_SUPPORT_400_400_RESOLUTION);
        t30_set_supported_image_sizes(s->t30, T30_SUPPORT_215MM_WIDTH | T30_SUPPORT_255MM_WIDTH | T30_SUPPORT_303MM_WIDTH | T30_SUPPORT_A4_LENGTH
                                              | T30_SUPPORT_B4_LENGTH | T30_SUPPORT_US_LETTER_LENGTH | T30_SUPPORT_US_LEGAL_LENGTH
                                              | T30_SUPPORT_UNLIMITED_LENGTH);
    } else
        t30_set_rx_file(s->t30, s->rx_file, -1);
    t30_set_ecm_capability(s->t30, opt.ecm);
    t30_set_supported_compressions(s->t30, opt.compressions);
    t30_set_phase_b_handler(s->t30, phase_b_handler, s);
    t30_set_phase_d_handler(s->t30, phase_d_handler, s);
    t30_set_phase_e_handler(s->t30, phase_e_handler, s);
    t30_set_real_time_frame_handler(s->t30, real_time_frame_handler, s);
    if (opt.debug) {
        int level = SPAN_LOG_SHOW_SEVERITY | SPAN_LOG_SHOW_PROTOCOL | SPAN_LOG_SHOW_SAMPLE_TIME | SPAN_LOG_FLOW;
        span_log_set_level(t30_get_logging_state(s->t30), level);
        span_log_set_level(t38_core_get_logging_state(core), level);
        span_log_set_level(t38_terminal_get_logging_state(s->terminal), level);
    }
    return 0;
}

/* Reads and handles every datagram waiting on the call's socket; the first one names the far end. */
static void drain_socket(session_t *s)
{
    for (;;) {
        uint8_t buf[MAX_DATAGRAM];
        struct sockaddr_in from;
        socklen_t from_len = sizeof(from);
        ssize_t n = recvfrom(s->sock, buf, sizeof(buf), 0, (struct sockaddr *) &from, &from_len);
        if (n < 0)
            return;
        if (!s->have_remote) {
            s->remote = from;
            s->have_remote = 1;
        }
        receive_datagram(s, buf, (int) n);
    }
}

static void tick(session_t *s)
{
    s->samples += SAMPLES_PER_TICK;
    t38_terminal_send_timeout(s->terminal, SAMPLES_PER_TICK);
}

/* 0: go on; 1: phase E and its linger are over; 2: the virtual watchdog fired. */
static int call_over(const session_t *s)
{
    if (s->phase_e_code >= 0 && s->samples >= s->phase_e_at + 2 * 8000)
        return 1;
    if (s->samples > (int64_t) (opt.watchdog_virtual_s * 8000)) {
        if (opt.count > 1)
            fprintf(stderr, "[%d] ", s->index);
        fprintf(stderr, "virtual-time watchdog: %.0f s\n", opt.watchdog_virtual_s);
        return 2;
    }
    return 0;
}

/* Ends the call with `exit_code`: closes its TIFF file, prints its RESULT line, frees it. */
static void finish_session(session_t *s, int exit_code)
{
    if (s->done)
        return;
    s->done = 1;
    s->exit_code = exit_code;
    /* Closes the TIFF file if the call is still open (watchdog, signal). */
    t30_terminate(s->t30);
    print_result(s, now_s() - launched);
    t38_terminal_free(s->terminal);
    s->terminal = NULL;
    close(s->sock);
    s->sock = -1;
    live_sessions--;
}

/* Ends the call if it is over; returns whether it is. */
static int finish_if_over(session_t *s)
{
    int over = call_over(s);
    if (over)
        finish_session(s, over == 1 ? (s->phase_e_code == T30_ERR_OK ? 0 : 1) : 3);
    return over != 0;
}

/* One tick of a stepped call for its first STEP, answered with STEPPED. */
static void step_session(session_t *s)
{
    s->step_head = (s->step_head + 1) % MAX_PENDING_STEPS;
    s->step_pending--;
    s->step_since = now_s();
    tick(s);
    if (opt.count > 1)
        printf("STEPPED %d %ld\n", s->index, s->udptl.tx_sent);
    else
        printf("STEPPED %ld\n", s->udptl.tx_sent);
    fflush(stdout);
    finish_if_over(s);
}

/* ---- the test's commands (lockstep) ------------------------------------------------------------ */

/* Handles one line from stdin; returns -1 for a line it does not know. */
static int handle_command(const char *line)
{
    int index;
    long expected;
    if (opt.count > 1 ? sscanf(line, "STEP %d %ld", &index, &expected) == 2 : (index = 0, sscanf(line, "STEP %ld", &expected) == 1)) {
        if (index < 0 || index >= opt.count)
            return -1;
        session_t *s = &sessions[index];
        if (s->done || s->pacing != PACE_STEPPED)
            return 0; /* ended meanwhile: the test learns it from the RESULT line */
        if (s->step_pending == MAX_PENDING_STEPS) {
            fprintf(stderr, "lockstep: call %d has %d STEPs not yet answered\n", index, MAX_PENDING_STEPS);
            return -1;
        }
        if (s->step_pending == 0)
            s->step_since = now_s();
        s->steps[(s->step_head + s->step_pending) % MAX_PENDING_STEPS] = expected;
        s->step_pending++;
        return 0;
    }
    if (opt.count > 1 && sscanf(line, "STOP %d", &index) == 1) {
        if (index < 0 || index >= opt.count)
            return -1;
        if (!sessions[index].done) {
            fprintf(stderr, "[%d] stopped by the test\n", index);
            finish_session(&sessions[index], 3);
        }
        return 0;
    }
    if (opt.count > 1 && sscanf(line, "END %d", &index) == 1) {
        if (index < 0 || index >= opt.count)
            return -1;
        if (sessions[index].pacing == PACE_STEPPED)
            sessions[index].end_requested = 1;
        return 0;
    }
    return -1;
}

/* At the end of stdin every stepped call runs on alone. */
static void end_of_commands(void)
{
    for (int i = 0; i < opt.count; i++)
        if (sessions[i].pacing == PACE_STEPPED)
            sessions[i].end_requested = 1;
}

static char command_buf[4096];
static size_t command_len;

/* Reads what stdin has; returns 0 at its end, 1 otherwise, -1 for a line it does not know. */
static int read_commands(void)
{
    for (;;) {
        ssize_t n = read(STDIN_FILENO, command_buf + command_len, sizeof(command_buf) - 1 - command_len);
        if (n == 0) {
            /* A last line without its newline still counts. */
            if (command_len > 0) {
                command_buf[command_len] = '\0';
                command_len = 0;
                if (handle_command(command_buf) < 0) {
                    fprintf(stderr, "lockstep: unknown command: %s\n", command_buf);
                    return -1;
                }
            }
            return 0;
        }
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 1 : 0;
        command_len += (size_t) n;
        command_buf[command_len] = '\0';
        char *line = command_buf;
        char *newline;
        while ((newline = strchr(line, '\n')) != NULL) {
            *newline = '\0';
            if (handle_command(line) < 0) {
                fprintf(stderr, "lockstep: unknown command: %s\n", line);
                return -1;
            }
            line = newline + 1;
        }
        command_len = strlen(line);
        memmove(command_buf, line, command_len);
        if (command_len >= sizeof(command_buf) - 1) {
            fprintf(stderr, "lockstep: line too long\n");
            return -1;
        }
    }
}

/* ---- the loop -------------------------------------------------------------------------------- */

/*
 * Runs every call to its end on one epoll loop and returns the exit code: 0 when every call ended
 * with T30_ERR_OK, else the highest of the calls' codes (1: the call failed; 3: a watchdog or a
 * signal ended it first; 4: a stepped call waited 10 s of wall time for a datagram the test said
 * it had sent, an error of the harness or the test), or 2 for a command it does not know.
 *
 * A call paced by the wall clock starts its clock with its first datagram and ticks whenever its
 * next 20 ms are due; the loop sleeps until the earliest call is due. A stepped call ticks once
 * each time a STEP has come and the datagrams it names have arrived. A call that runs on alone
 * ticks up to FREE_RUN_TICKS times per turn.
 */
static int run_loop(int ep, int timer_fd)
{
    int bad_command = 0;
    struct epoll_event events[256];
    while (live_sessions > 0) {
        double now = now_s();
        if (stop_requested) {
            fprintf(stderr, "stopped by signal\n");
            break;
        }
        /* In lockstep the wall clock does not pace the calls: a stepped call has its own 10 s
           limit per step, one that runs on alone the virtual watchdog. */
        if (!opt.lockstep && now - launched > opt.watchdog_wall_s) {
            fprintf(stderr, "wall-clock watchdog: %.0f s\n", opt.watchdog_wall_s);
            break;
        }
        /* How long to sleep: until the earliest call paced by the wall clock is due, not at all
           when a call runs on alone, at most 100 ms (watchdogs, signals). */
        double wait = 0.1;
        for (int i = 0; i < opt.count; i++) {
            const session_t *s = &sessions[i];
            if (s->done)
                continue;
            if (s->pacing == PACE_FREE || (s->pacing == PACE_STEPPED && s->end_requested && s->step_pending == 0)) {
                wait = 0;
                break;
            }
            if (s->pacing == PACE_WALL && s->started >= 0) {
                double next_tick_at = s->started + (double) (s->samples + SAMPLES_PER_TICK) / (8000.0 * opt.speed);
                if (next_tick_at - now < wait)
                    wait = next_tick_at - now;
            }
        }
        /* With many calls, each due at its own instant, waking for each would cost more than
           the calls: the loop sleeps at least a quarter of a tick, at most 0.5 ms, and ticks
           every call then due. */
        const double coalesce = opt.count > 1 ? (0.005 / opt.speed < 0.0005 ? 0.005 / opt.speed : 0.0005) : 0;
        if (wait > 0 && wait < coalesce)
            wait = coalesce;
        /* epoll_wait's timeout is whole milliseconds: the timer (a timerfd in the same epoll set)
           wakes the loop on the nanosecond, as the 0.4 ms ticks of a 50x clock need. */
        int timeout_ms = 0;
        if (wait > 0) {
            struct itimerspec due = {{0, 0}, {(time_t) wait, (long) ((wait - (double) (time_t) wait) * 1e9)}};
            if (due.it_value.tv_sec == 0 && due.it_value.tv_nsec == 0)
                due.it_value.tv_nsec = 1;
            timerfd_settime(timer_fd, 0, &due, NULL);
            timeout_ms = -1;
        }
        int n = epoll_wait(ep, events, (int) (sizeof(events) / sizeof(events[0])), timeout_ms);
        for (int k = 0; k < n; k++) {
            if (events[k].data.u32 == TIMER_EVENT) {
                uint64_t expirations;
                if (read(timer_fd, &expirations, sizeof(expirations)) < 0) {
                    /* not yet expired (EAGAIN): nothing to clear */
                }
                continue;
            }
            int index = events[k].data.u32 == STDIN_EVENT ? -1 : (int) events[k].data.u32;
            if (index < 0) {
                int r = read_commands();
                if (r < 0) {
                    bad_command = 1;
                    break;
                }
                if (r == 0) {
                    epoll_ctl(ep, EPOLL_CTL_DEL, STDIN_FILENO, NULL);
                    end_of_commands();
                }
                continue;
            }
            session_t *s = &sessions[index];
            if (s->done)
                continue;
            drain_socket(s);
            /* The answering side's clock starts with the caller's first packet. */
            if (s->pacing == PACE_WALL && s->started < 0 && s->udptl.rx_datagrams > 0)
                s->started = now_s();
        }
        if (bad_command)
            break;
        now = now_s();
        for (int i = 0; i < opt.count; i++) {
            session_t *s = &sessions[i];
            if (s->done)
                continue;
            switch (s->pacing) {
            case PACE_WALL:
                if (s->started < 0)
                    break;
                {
                    int64_t due = (int64_t) ((now - s->started) * 8000.0 * opt.speed);
                    while (s->samples + SAMPLES_PER_TICK <= due)
                        tick(s);
                }
                finish_if_over(s);
                break;
            case PACE_STEPPED:
                while (!s->done && s->pacing == PACE_STEPPED && s->step_pending > 0 && s->udptl.rx_datagrams >= s->steps[s->step_head])
                    step_session(s);
                if (!s->done && s->step_pending > 0 && now - s->step_since > 10) {
                    fprintf(stderr, "lockstep: call %d waited 10 s for datagram %ld of %ld\n", s->index, s->udptl.rx_datagrams + 1, s->steps[s->step_head]);
                    finish_session(s, 4);
                }
                if (!s->done && s->step_pending == 0 && s->end_requested)
                    s->pacing = PACE_FREE;
                break;
            case PACE_FREE:
                for (int t = 0; t < FREE_RUN_TICKS && !s->done; t++) {
                    drain_socket(s);
                    tick(s);
                    finish_if_over(s);
                }
                break;
            }
        }
    }
    /* A watchdog, a signal or a bad command: the calls still open end with code 3, each still with
       a RESULT line. */
    for (int i = 0; i < opt.count; i++)
        finish_session(&sessions[i], 3);
    if (bad_command)
        return 2;
    int code = 0;
    for (int i = 0; i < opt.count; i++)
        if (sessions[i].exit_code > code)
            code = sessions[i].exit_code;
    return code;
}

static void usage(void)
{
    fprintf(stderr, "usage: t38_receiver -f rx.tif | -t tx.tif [-l HOST:PORT] [-r HOST:PORT] [-s SPEED] [-e] [-R DEPTH] [-x LOSS%%] [-S SEED]\n"
                    "                    [-V VERSION] [-M MAXDATAGRAM] [-i IDENT] [-T VIRTUAL_S] [-W WALL_S] [-P] [-C MH,MR,MMR] [-L] [-n COUNT] [-d]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    opt.speed = 1;
    opt.seed = 1;
    opt.max_datagram = 400;
    opt.ident = "FAXLINE-TEST-RX";
    opt.watchdog_virtual_s = 600;
    opt.watchdog_wall_s = 120;
    opt.count = 1;
    opt.compressions = T30_SUPPORT_T4_1D_COMPRESSION | T30_SUPPORT_T4_2D_COMPRESSION | T30_SUPPORT_T6_COMPRESSION;
    parse_addr("127.0.0.1:0", &opt.local);

    int c;
    while ((c = getopt(argc, argv, "f:t:l:r:s:eR:x:S:V:M:i:T:W:PC:Ln:d")) != -1) {
        switch (c) {
        case 'f': opt.rx_file = optarg; break;
        case 't': opt.tx_file = optarg; break;
        case 'l': if (parse_addr(optarg, &opt.local) < 0) usage(); break;
        case 'r': if (parse_addr(optarg, &opt.remote) < 0) usage(); opt.have_remote = 1; break;
        case 's': opt.speed = atof(optarg); break;
        case 'e': opt.ecm = 1; break;
        case 'R': opt.depth = atoi(optarg); break;
        case 'x': opt.loss_pct = atof(optarg); break;
        case 'S': opt.seed = (uint32_t) strtoul(optarg, NULL, 10); break;
        case 'V': opt.version = atoi(optarg); break;
        case 'M': opt.max_datagram = atoi(optarg); break;
        case 'i': opt.ident = optarg; break;
        case 'T': opt.watchdog_virtual_s = atof(optarg); break;
        case 'W': opt.watchdog_wall_s = atof(optarg); break;
        case 'P': opt.no_pacing = 1; break;
        case 'C':
            opt.compressions = 0;
            for (char *name = strtok(optarg, ","); name != NULL; name = strtok(NULL, ",")) {
                if (strcmp(name, "MH") == 0) opt.compressions |= T30_SUPPORT_T4_1D_COMPRESSION;
                else if (strcmp(name, "MR") == 0) opt.compressions |= T30_SUPPORT_T4_2D_COMPRESSION;
                else if (strcmp(name, "MMR") == 0) opt.compressions |= T30_SUPPORT_T6_COMPRESSION;
                else usage();
            }
            if (opt.compressions == 0) usage();
            break;
        case 'L': opt.lockstep = 1; break;
        case 'n': opt.count = atoi(optarg); break;
        case 'd': opt.debug = 1; break;
        default: usage();
        }
    }
    if ((opt.rx_file == NULL) == (opt.tx_file == NULL) || opt.speed <= 0 || opt.depth < 0 || opt.depth > MAX_DEPTH || opt.version < 0 || opt.version > 3
        || opt.max_datagram < 32 || opt.max_datagram > MAX_DATAGRAM || opt.count < 1 || opt.count > MAX_SESSIONS || (opt.count > 1 && opt.have_remote))
        usage();
    signal(SIGPIPE, SIG_IGN);
    /* SIGTERM/SIGINT end the calls early, still with a RESULT line each (exit code 3). */
    signal(SIGTERM, request_stop);
    signal(SIGINT, request_stop);

    /* A socket per call: take the whole descriptor allowance. */
    struct rlimit files;
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        setrlimit(RLIMIT_NOFILE, &files);
    }
    int ep = epoll_create1(0);
    int timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    sessions = calloc((size_t) opt.count, sizeof(session_t));
    struct epoll_event timer_ev = {.events = EPOLLIN, .data.u32 = TIMER_EVENT};
    if (ep < 0 || timer_fd < 0 || sessions == NULL || epoll_ctl(ep, EPOLL_CTL_ADD, timer_fd, &timer_ev) < 0) {
        fprintf(stderr, "cannot start: %s\n", strerror(errno));
        return 2;
    }
    printf("LISTENING");
    for (int i = 0; i < opt.count; i++) {
        session_t *s = &sessions[i];
        if (open_session(s, i) < 0)
            return 2;
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t) i};
        epoll_ctl(ep, EPOLL_CTL_ADD, s->sock, &ev);
        struct sockaddr_in bound;
        socklen_t bound_len = sizeof(bound);
        getsockname(s->sock, (struct sockaddr *) &bound, &bound_len);
        printf(" %d", ntohs(bound.sin_port));
        live_sessions++;
    }
    printf("\n");
    fflush(stdout);
    if (opt.lockstep || opt.count > 1) {
        fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = STDIN_EVENT};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, STDIN_FILENO, &ev) < 0) {
            /* stdin is a file or /dev/null (epoll refuses those): read it all now. */
            while (read_commands() > 0)
                ;
            end_of_commands();
        }
    }

    launched = now_s();
    int code = run_loop(ep, timer_fd);
    close(timer_fd);
    close(ep);
    free(sessions);
    return code;
}
