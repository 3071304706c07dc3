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
 * With -t it is a T.38 SENDER instead (the calling terminal: CNG, then DCS, pages, EOP), for the
 * tests where Faxline receives (test/interop/sip-reception-sipp.test.ts): it still waits for the
 * first datagram (Faxline, the answering side, sends its CED and DIS first) and starts its clock
 * with it. The RESULT line then also carries "pages_tx".
 *
 * Usage: t38_receiver -f rx.tif | -t tx.tif [-l HOST:PORT] [-r HOST:PORT] [-s SPEED] [-e] [-R DEPTH] [-x LOSS%]
 *                     [-S SEED] [-V VERSION] [-M MAXDATAGRAM] [-i IDENT] [-T VIRTUAL_S] [-W WALL_S]
 *                     [-P] [-C MH[,MR[,MMR]]] [-L] [-d]
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
 *   -W  watchdog in wall seconds, also for waiting for the first datagram (default 120)
 *   -P  no pacing (spandsp T38_TERMINAL_OPTION_NO_PACING)
 *   -C  compressions offered in our DIS, e.g. MH or MH,MR or MH,MR,MMR (default: all three)
 *   -L  lockstep with the test over stdin/stdout (see above)
 *   -d  spandsp FLOW logs on stderr
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <tiffio.h>
#include <spandsp.h>

#define SAMPLES_PER_TICK 160
#define MAX_IFP 1024
#define MAX_DEPTH 8
#define MAX_DATAGRAM 2048

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
    int debug;
} opt;

static int sock = -1;
static t38_terminal_state_t *terminal;
static t30_state_t *t30;
static int64_t samples;
static int phase_e_code = -1;
static int64_t phase_e_at = -1;
static t30_stats_t last_page;
static int have_last_page;

static struct {
    uint16_t tx_seq;
    uint8_t history[MAX_DEPTH][MAX_IFP];
    int history_len[MAX_DEPTH];
    int history_count;
    int rx_started;
    uint16_t rx_expected;
    long tx_datagrams, tx_dropped, tx_trimmed, tx_sent;
    long rx_datagrams, rx_recovered, rx_lost, rx_duplicates, rx_fec, rx_malformed;
} udptl;

static uint32_t rng_state;
static volatile sig_atomic_t stop_requested;

static void request_stop(int signo)
{
    stop_requested = 1;
}

static uint32_t rng_next(void)
{
    /* xorshift32 */
    uint32_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    rng_state = x;
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

static int encode_datagram(uint8_t *out, uint16_t seq, const uint8_t *ifp, int ifp_len, int secondaries)
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
        at += put_length(out, at, udptl.history_len[i]);
        memcpy(out + at, udptl.history[i], (size_t) udptl.history_len[i]);
        at += udptl.history_len[i];
    }
    return at;
}

static void send_datagram(const uint8_t *buf, int len)
{
    udptl.tx_datagrams++;
    if (opt.loss_pct > 0 && (rng_next() % 100000) < (uint32_t) (opt.loss_pct * 1000)) {
        udptl.tx_dropped++;
        return;
    }
    if (!opt.have_remote)
        return;
    udptl.tx_sent++;
    if (sendto(sock, buf, (size_t) len, 0, (struct sockaddr *) &opt.remote, sizeof(opt.remote)) < 0 && opt.debug)
        fprintf(stderr, "sendto: %s\n", strerror(errno));
}

static int tx_packet_handler(t38_core_state_t *core, void *user_data, const uint8_t *ifp, int len, int count)
{
    uint8_t out[MAX_DATAGRAM + MAX_DEPTH * MAX_IFP];
    if (len > MAX_IFP)
        return -1;
    int secondaries = opt.depth < udptl.history_count ? opt.depth : udptl.history_count;
    int n = encode_datagram(out, udptl.tx_seq, ifp, len, secondaries);
    while (n > opt.max_datagram && secondaries > 0) {
        secondaries--;
        udptl.tx_trimmed++;
        n = encode_datagram(out, udptl.tx_seq, ifp, len, secondaries);
    }
    for (int i = 0; i < count; i++)
        send_datagram(out, n);
    udptl.tx_seq++;
    memmove(&udptl.history[1], &udptl.history[0], sizeof(udptl.history[0]) * (MAX_DEPTH - 1));
    memmove(&udptl.history_len[1], &udptl.history_len[0], sizeof(udptl.history_len[0]) * (MAX_DEPTH - 1));
    memcpy(udptl.history[0], ifp, (size_t) len);
    udptl.history_len[0] = len;
    if (udptl.history_count < MAX_DEPTH)
        udptl.history_count++;
    return 0;
}

static void deliver(const uint8_t *ifp, int len, uint16_t seq)
{
    t38_core_rx_ifp_packet(t38_terminal_get_t38_core_state(terminal), ifp, len, seq);
}

static void receive_datagram(const uint8_t *buf, int len)
{
    udptl.rx_datagrams++;
    if (len < 3) {
        udptl.rx_malformed++;
        return;
    }
    uint16_t seq = (uint16_t) ((buf[0] << 8) | buf[1]);
    int at = 2;
    int primary_len;
    int k = get_length(buf, len, at, &primary_len);
    if (k < 0 || at + k + primary_len > len) {
        udptl.rx_malformed++;
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
                udptl.rx_malformed++;
                return;
            }
            at += k;
            for (int i = 0; i < count; i++) {
                int l;
                k = get_length(buf, len, at, &l);
                if (k < 0 || at + k + l > len) {
                    udptl.rx_malformed++;
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
            udptl.rx_fec++; /* FEC: use the primary only */
        }
    }

    if (!udptl.rx_started) {
        udptl.rx_started = 1;
        udptl.rx_expected = seq;
    }
    uint16_t ahead = (uint16_t) (seq - udptl.rx_expected);
    if (ahead >= 0x8000) {
        udptl.rx_duplicates++; /* late or repeated */
        return;
    }
    /* Recover the gap, oldest first: secondary[i] carries seq - 1 - i. */
    for (int gap = ahead; gap >= 1; gap--) {
        uint16_t missing = (uint16_t) (seq - gap);
        if (gap - 1 < n_secondary) {
            deliver(secondary[gap - 1], secondary_len[gap - 1], missing);
            udptl.rx_recovered++;
        } else {
            udptl.rx_lost++;
        }
    }
    deliver(primary, primary_len, seq);
    udptl.rx_expected = (uint16_t) (seq + 1);
}

/* ---- T.30 events ------------------------------------------------------------------------------ */

static void snapshot_page(void)
{
    t30_stats_t stats;
    t30_get_transfer_statistics(t30, &stats);
    if (stats.width > 0) {
        last_page = stats;
        have_last_page = 1;
    }
}

static void real_time_frame_handler(t30_state_t *s, void *user_data, int incoming, const uint8_t msg[], int len)
{
    if (len < 3 || msg[2] == T4_FCD || msg[2] == T4_RCP)
        return;
    fprintf(stderr, "%8.2f %s %-4s ", samples / 8000.0, incoming ? "<-" : "->", t30_frametype(msg[2]));
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

static int phase_b_handler(t30_state_t *s, void *user_data, int result)
{
    fprintf(stderr, "%8.2f Phase B: %s remote-ident=\"%s\"\n", samples / 8000.0, t30_frametype((uint8_t) result), t30_get_rx_ident(s));
    return T30_ERR_OK;
}

static int phase_d_handler(t30_state_t *s, void *user_data, int result)
{
    snapshot_page();
    t30_stats_t t;
    t30_get_transfer_statistics(s, &t);
    fprintf(stderr, "%8.2f Phase D: %s pages_rx=%d rate=%d ecm=%d enc=%s size=%dx%d res=%dx%d bad_rows=%d\n", samples / 8000.0,
            t30_frametype((uint8_t) result), t.pages_rx, t.bit_rate, t.error_correcting_mode, encoding_name(t.encoding), t.width, t.length,
            t.x_resolution, t.y_resolution, t.bad_rows);
    return T30_ERR_OK;
}

static void phase_e_handler(t30_state_t *s, void *user_data, int completion_code)
{
    phase_e_code = completion_code;
    phase_e_at = samples;
    fprintf(stderr, "%8.2f Phase E: %d %s\n", samples / 8000.0, completion_code, t30_completion_code_to_str(completion_code));
}

/* ---- output ---------------------------------------------------------------------------------- */

static void json_string(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char) *s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void print_result(double wall_s)
{
    t30_stats_t t;
    t30_get_transfer_statistics(t30, &t);
    const t30_stats_t *page = have_last_page ? &last_page : &t;
    printf("RESULT {\"code\":%d,\"text\":", phase_e_code);
    json_string(phase_e_code >= 0 ? t30_completion_code_to_str(phase_e_code) : "no phase E (watchdog)");
    printf(",\"pages_tx\":%d,\"pages_rx\":%d,\"bit_rate\":%d,\"ecm\":%d,\"encoding\":\"%s\",\"width\":%d,\"length\":%d,\"x_resolution\":%d,"
           "\"y_resolution\":%d,\"bad_rows\":%d,\"remote_ident\":",
           t.pages_tx, t.pages_rx, t.bit_rate, t.error_correcting_mode, encoding_name(page->encoding), page->width, page->length, page->x_resolution,
           page->y_resolution, page->bad_rows);
    json_string(t30_get_rx_ident(t30));
    printf(",\"local_ident\":");
    json_string(opt.ident);
    printf(",\"virtual_s\":%.2f,\"wall_s\":%.3f,\"speed\":%g,\"udptl\":{\"tx_datagrams\":%ld,\"tx_dropped\":%ld,\"tx_trimmed\":%ld,"
           "\"rx_datagrams\":%ld,\"rx_recovered\":%ld,\"rx_lost\":%ld,\"rx_duplicates\":%ld,\"rx_fec\":%ld,\"rx_malformed\":%ld}}\n",
           samples / 8000.0, wall_s, opt.speed, udptl.tx_datagrams, udptl.tx_dropped, udptl.tx_trimmed, udptl.rx_datagrams,
           udptl.rx_recovered, udptl.rx_lost, udptl.rx_duplicates, udptl.rx_fec, udptl.rx_malformed);
    fflush(stdout);
}

/* ---- main ------------------------------------------------------------------------------------ */

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

/* Reads and handles every datagram waiting on the socket; the first one names the far end. */
static void drain_socket(void)
{
    for (;;) {
        uint8_t buf[MAX_DATAGRAM];
        struct sockaddr_in from;
        socklen_t from_len = sizeof(from);
        ssize_t n = recvfrom(sock, buf, sizeof(buf), 0, (struct sockaddr *) &from, &from_len);
        if (n < 0)
            return;
        if (!opt.have_remote) {
            opt.remote = from;
            opt.have_remote = 1;
        }
        receive_datagram(buf, (int) n);
    }
}

static void tick(void)
{
    samples += SAMPLES_PER_TICK;
    t38_terminal_send_timeout(terminal, SAMPLES_PER_TICK);
}

/* 0: go on; 1: phase E and its linger are over; 2: the virtual watchdog fired. */
static int call_over(void)
{
    if (phase_e_code >= 0 && samples >= phase_e_at + 2 * 8000)
        return 1;
    if (samples > (int64_t) (opt.watchdog_virtual_s * 8000)) {
        fprintf(stderr, "virtual-time watchdog: %.0f s\n", opt.watchdog_virtual_s);
        return 2;
    }
    return 0;
}

/*
 * The lockstep loop (-L). Returns the exit code. A wait for datagrams the test says it sent that
 * lasts 10 s of wall time means a datagram was lost on loopback or the test miscounted: that is
 * an error of the harness, reported as such (exit 4).
 */
static int run_lockstep(void)
{
    char line[64];
    while (fgets(line, sizeof(line), stdin) != NULL) {
        long expected;
        if (sscanf(line, "STEP %ld", &expected) != 1) {
            fprintf(stderr, "lockstep: unknown command: %s", line);
            return 2;
        }
        const double waiting_since = now_s();
        drain_socket();
        while (udptl.rx_datagrams < expected) {
            if (stop_requested)
                return 3;
            if (now_s() - waiting_since > 10) {
                fprintf(stderr, "lockstep: waited 10 s for datagram %ld of %ld\n", udptl.rx_datagrams + 1, expected);
                return 4;
            }
            struct pollfd pfd = {sock, POLLIN, 0};
            struct timespec timeout = {0, 100 * 1000 * 1000};
            ppoll(&pfd, 1, &timeout, NULL);
            drain_socket();
        }
        tick();
        printf("STEPPED %ld\n", udptl.tx_sent);
        fflush(stdout);
        int over = call_over();
        if (over)
            return over == 1 ? (phase_e_code == T30_ERR_OK ? 0 : 1) : 3;
    }
    /* The test's side has ended: run on alone until phase E and its linger. */
    for (;;) {
        if (stop_requested)
            return 3;
        drain_socket();
        tick();
        int over = call_over();
        if (over)
            return over == 1 ? (phase_e_code == T30_ERR_OK ? 0 : 1) : 3;
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: t38_receiver -f rx.tif | -t tx.tif [-l HOST:PORT] [-r HOST:PORT] [-s SPEED] [-e] [-R DEPTH] [-x LOSS%%] [-S SEED]\n"
                    "                    [-V VERSION] [-M MAXDATAGRAM] [-i IDENT] [-T VIRTUAL_S] [-W WALL_S] [-P] [-C MH,MR,MMR] [-L] [-d]\n");
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
    opt.compressions = T30_SUPPORT_T4_1D_COMPRESSION | T30_SUPPORT_T4_2D_COMPRESSION | T30_SUPPORT_T6_COMPRESSION;
    parse_addr("127.0.0.1:0", &opt.local);

    int c;
    while ((c = getopt(argc, argv, "f:t:l:r:s:eR:x:S:V:M:i:T:W:PC:Ld")) != -1) {
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
        case 'd': opt.debug = 1; break;
        default: usage();
        }
    }
    if ((opt.rx_file == NULL) == (opt.tx_file == NULL) || opt.speed <= 0 || opt.depth < 0 || opt.depth > MAX_DEPTH || opt.version < 0 || opt.version > 3
        || opt.max_datagram < 32 || opt.max_datagram > MAX_DATAGRAM)
        usage();
    rng_state = opt.seed ? opt.seed : 1;
    signal(SIGPIPE, SIG_IGN);
    /* SIGTERM/SIGINT end the call early, still with a RESULT line (exit code 3). */
    signal(SIGTERM, request_stop);
    signal(SIGINT, request_stop);

    sock = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    if (sock < 0 || bind(sock, (struct sockaddr *) &opt.local, sizeof(opt.local)) < 0) {
        fprintf(stderr, "cannot bind: %s\n", strerror(errno));
        return 2;
    }
    struct sockaddr_in bound;
    socklen_t bound_len = sizeof(bound);
    getsockname(sock, (struct sockaddr *) &bound, &bound_len);
    printf("LISTENING %d\n", ntohs(bound.sin_port));
    fflush(stdout);

    terminal = t38_terminal_init(NULL, opt.tx_file != NULL, tx_packet_handler, NULL);
    t30 = t38_terminal_get_t30_state(terminal);
    t38_core_state_t *core = t38_terminal_get_t38_core_state(terminal);
    t38_terminal_set_config(terminal, opt.no_pacing ? T38_TERMINAL_OPTION_NO_PACING : 0);
    t38_set_t38_version(core, opt.version);
    t38_set_max_datagram_size(core, opt.max_datagram);
    t30_set_tx_ident(t30, opt.ident);
    if (opt.tx_file != NULL)
        t30_set_tx_file(t30, opt.tx_file, -1, -1);
    else
        t30_set_rx_file(t30, opt.rx_file, -1);
    t30_set_ecm_capability(t30, opt.ecm);
    t30_set_supported_compressions(t30, opt.compressions);
    t30_set_phase_b_handler(t30, phase_b_handler, NULL);
    t30_set_phase_d_handler(t30, phase_d_handler, NULL);
    t30_set_phase_e_handler(t30, phase_e_handler, NULL);
    t30_set_real_time_frame_handler(t30, real_time_frame_handler, NULL);
    if (opt.debug) {
        int level = SPAN_LOG_SHOW_SEVERITY | SPAN_LOG_SHOW_PROTOCOL | SPAN_LOG_SHOW_SAMPLE_TIME | SPAN_LOG_FLOW;
        span_log_set_level(t30_get_logging_state(t30), level);
        span_log_set_level(t38_core_get_logging_state(core), level);
        span_log_set_level(t38_terminal_get_logging_state(terminal), level);
    }

    const double launched = now_s();
    if (opt.lockstep) {
        int code = run_lockstep();
        t30_terminate(t30);
        print_result(now_s() - launched);
        t38_terminal_free(terminal);
        close(sock);
        return code;
    }
    double started = -1;
    int exit_code = 3;
    for (;;) {
        double now = now_s();
        if (stop_requested) {
            fprintf(stderr, "stopped by signal\n");
            break;
        }
        if (now - launched > opt.watchdog_wall_s) {
            fprintf(stderr, "wall-clock watchdog: %.0f s\n", opt.watchdog_wall_s);
            break;
        }
        struct timespec timeout = {0, 100 * 1000 * 1000};
        if (started >= 0) {
            double next_tick_at = started + (double) (samples + SAMPLES_PER_TICK) / (8000.0 * opt.speed);
            double wait = next_tick_at - now;
            if (wait < 0)
                wait = 0;
            timeout.tv_sec = (time_t) wait;
            timeout.tv_nsec = (long) ((wait - (double) timeout.tv_sec) * 1e9);
        }
        struct pollfd pfd = {sock, POLLIN, 0};
        ppoll(&pfd, 1, &timeout, NULL);

        if (pfd.revents & POLLIN) {
            drain_socket();
            /* The answering side's clock starts with the caller's first packet. */
            if (started < 0 && udptl.rx_datagrams > 0)
                started = now_s();
        }
        if (started < 0)
            continue;
        int64_t due = (int64_t) ((now_s() - started) * 8000.0 * opt.speed);
        while (samples + SAMPLES_PER_TICK <= due)
            tick();
        int over = call_over();
        if (over == 1)
            exit_code = phase_e_code == T30_ERR_OK ? 0 : 1;
        if (over)
            break;
    }
    /* Closes the TIFF file if the call is still open (watchdog). */
    t30_terminate(t30);
    print_result(now_s() - launched);
    t38_terminal_free(terminal);
    close(sock);
    return exit_code;
}
