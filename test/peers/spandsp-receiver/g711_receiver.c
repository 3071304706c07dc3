/*
 * g711_receiver: a G.711 audio fax RECEIVER over RTP/UDP, built on Debian's libspandsp 0.0.6: the
 * audio twin of test/peers/spandsp-receiver/t38_receiver.c, and the far end of Faxline's G.711
 * line tests (test/interop/api-live-fax.test.ts). A separate process with its own RTP code and
 * SpanDSP's own G.711 codec, so the sender under test shares nothing with it but the wire.
 *
 * It binds a UDP socket, prints "LISTENING <port>", waits for the first RTP packet (it is the
 * answering side), then runs a SpanDSP audio fax terminal (fax_state_t, V.21/V.27ter/V.29/V.17)
 * that receives into a TIFF file, on a virtual clock that starts with that first packet and runs
 * SPEED times faster than real time. Received audio is played out at a fixed delay behind the
 * first packet, by RTP timestamp; a 20 ms tick with nothing received is given to the modem as
 * lost (fax_rx_fillin). Every tick it sends one RTP packet of 160 samples (20 ms) to the source
 * of the first packet. After phase E it keeps ticking for 2 s of virtual time, prints
 *     RESULT {"code":0,"text":"OK","pages_rx":2,...}
 * and exits 0 on T30_ERR_OK, 1 otherwise, 3 when a watchdog or SIGTERM ended the call first.
 *
 * Usage: g711_receiver -f rx.tif [-l HOST:PORT] [-s SPEED] [-e] [-c A|U] [-p PT] [-D DELAY_MS]
 *                      [-i IDENT] [-T VIRTUAL_S] [-W WALL_S] [-d]
 *   -c  A-law (payload type 8, default) or µ-law (payload type 0)
 *   -p  payload type to send and accept (default: 8 for A-law, 0 for µ-law)
 *   -D  playout delay behind the first packet, virtual ms (default 60; at 50x use 600 or more)
 *   others as t38_receiver
 *
 * Built by scripts/build-native.sh; started by test/interop/peer-processes.ts.
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
#define RING 64000 /* 8 s of samples */
#define MAX_DATAGRAM 2048

static struct {
    const char *rx_file;
    struct sockaddr_in local;
    struct sockaddr_in remote;
    int have_remote;
    double speed;
    int ecm;
    int law;
    int payload_type;
    double delay_ms;
    const char *ident;
    double watchdog_virtual_s;
    double watchdog_wall_s;
    int debug;
} opt;

static int sock = -1;
static fax_state_t *fax;
static t30_state_t *t30;
static g711_state_t *codec;
static int64_t samples;
static int phase_e_code = -1;
static int64_t phase_e_at = -1;
static volatile sig_atomic_t stop_requested;

/* Playout: ring[pos % RING] holds the sample to play at local sample pos. */
static int16_t ring_samples[RING];
static uint8_t ring_filled[RING];
static int have_base;
static int64_t base;
static uint32_t first_ts;
static uint32_t remote_ssrc;

static struct {
    uint16_t seq;
    uint32_t ts;
    uint32_t ssrc;
    long tx_packets, rx_packets, rx_ignored, rx_malformed, late_samples, missing_ticks, played_ticks;
} rtp;

static void request_stop(int signo)
{
    stop_requested = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void receive_packet(const uint8_t *buf, int len)
{
    if (len < 12 || (buf[0] >> 6) != 2) {
        rtp.rx_malformed++;
        return;
    }
    int at = 12 + (buf[0] & 0x0F) * 4;
    if (buf[0] & 0x10) {
        if (len < at + 4) {
            rtp.rx_malformed++;
            return;
        }
        at += 4 + ((buf[at + 2] << 8) | buf[at + 3]) * 4;
    }
    int end = len;
    if (buf[0] & 0x20)
        end -= buf[len - 1];
    if (at > end) {
        rtp.rx_malformed++;
        return;
    }
    int pt = buf[1] & 0x7F;
    uint32_t ts = ((uint32_t) buf[4] << 24) | ((uint32_t) buf[5] << 16) | ((uint32_t) buf[6] << 8) | buf[7];
    uint32_t ssrc = ((uint32_t) buf[8] << 24) | ((uint32_t) buf[9] << 16) | ((uint32_t) buf[10] << 8) | buf[11];
    if (pt != opt.payload_type || (rtp.rx_packets > 0 && ssrc != remote_ssrc)) {
        rtp.rx_ignored++;
        return;
    }
    if (rtp.rx_packets == 0)
        remote_ssrc = ssrc;
    rtp.rx_packets++;
    int16_t linear[MAX_DATAGRAM];
    int n = g711_decode(codec, linear, buf + at, end - at);
    if (!have_base) {
        have_base = 1;
        base = samples + (int64_t) (opt.delay_ms * 8);
        first_ts = ts;
    }
    int64_t pos = base + (int32_t) (ts - first_ts);
    for (int i = 0; i < n; i++, pos++) {
        if (pos < samples || pos >= samples + RING) {
            rtp.late_samples++;
            continue;
        }
        ring_samples[pos % RING] = linear[i];
        ring_filled[pos % RING] = 1;
    }
}

static void send_audio(const int16_t *amp, int n)
{
    uint8_t out[12 + SAMPLES_PER_TICK];
    out[0] = 0x80;
    out[1] = (uint8_t) ((rtp.tx_packets == 0 ? 0x80 : 0) | opt.payload_type);
    out[2] = (uint8_t) (rtp.seq >> 8);
    out[3] = (uint8_t) rtp.seq;
    out[4] = (uint8_t) (rtp.ts >> 24);
    out[5] = (uint8_t) (rtp.ts >> 16);
    out[6] = (uint8_t) (rtp.ts >> 8);
    out[7] = (uint8_t) rtp.ts;
    out[8] = (uint8_t) (rtp.ssrc >> 24);
    out[9] = (uint8_t) (rtp.ssrc >> 16);
    out[10] = (uint8_t) (rtp.ssrc >> 8);
    out[11] = (uint8_t) rtp.ssrc;
    int bytes = g711_encode(codec, out + 12, amp, n);
    rtp.seq++;
    rtp.ts += (uint32_t) n;
    rtp.tx_packets++;
    if (opt.have_remote)
        sendto(sock, out, (size_t) (12 + bytes), 0, (struct sockaddr *) &opt.remote, sizeof(opt.remote));
}

static void tick(void)
{
    int16_t rx[SAMPLES_PER_TICK];
    int got = 0;
    for (int i = 0; i < SAMPLES_PER_TICK; i++) {
        int64_t pos = samples + i;
        if (ring_filled[pos % RING]) {
            rx[i] = ring_samples[pos % RING];
            ring_filled[pos % RING] = 0;
            got++;
        } else {
            rx[i] = 0;
        }
    }
    if (got > 0) {
        fax_rx(fax, rx, SAMPLES_PER_TICK);
        rtp.played_ticks++;
    } else {
        fax_rx_fillin(fax, SAMPLES_PER_TICK);
        rtp.missing_ticks++;
    }
    int16_t tx[SAMPLES_PER_TICK];
    int n = fax_tx(fax, tx, SAMPLES_PER_TICK);
    if (n < SAMPLES_PER_TICK)
        memset(tx + n, 0, sizeof(int16_t) * (size_t) (SAMPLES_PER_TICK - n));
    send_audio(tx, SAMPLES_PER_TICK);
    samples += SAMPLES_PER_TICK;
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

static t30_stats_t last_page;
static int have_last_page;

static int phase_b_handler(t30_state_t *s, void *user_data, int result)
{
    fprintf(stderr, "%8.2f Phase B: %s remote-ident=\"%s\"\n", samples / 8000.0, t30_frametype((uint8_t) result), t30_get_rx_ident(s));
    return T30_ERR_OK;
}

static int phase_d_handler(t30_state_t *s, void *user_data, int result)
{
    t30_stats_t t;
    t30_get_transfer_statistics(s, &t);
    if (t.width > 0) {
        last_page = t;
        have_last_page = 1;
    }
    fprintf(stderr, "%8.2f Phase D: %s pages_rx=%d rate=%d ecm=%d enc=%s bad_rows=%d\n", samples / 8000.0, t30_frametype((uint8_t) result),
            t.pages_rx, t.bit_rate, t.error_correcting_mode, encoding_name(t.encoding), t.bad_rows);
    return T30_ERR_OK;
}

static void phase_e_handler(t30_state_t *s, void *user_data, int completion_code)
{
    phase_e_code = completion_code;
    phase_e_at = samples;
    fprintf(stderr, "%8.2f Phase E: %d %s\n", samples / 8000.0, completion_code, t30_completion_code_to_str(completion_code));
}

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
    printf(",\"pages_rx\":%d,\"bit_rate\":%d,\"ecm\":%d,\"encoding\":\"%s\",\"width\":%d,\"length\":%d,\"bad_rows\":%d,\"remote_ident\":",
           t.pages_rx, t.bit_rate, t.error_correcting_mode, encoding_name(page->encoding), page->width, page->length, page->bad_rows);
    json_string(t30_get_rx_ident(t30));
    printf(",\"local_ident\":");
    json_string(opt.ident);
    printf(",\"virtual_s\":%.2f,\"wall_s\":%.3f,\"speed\":%g,\"rtp\":{\"tx_packets\":%ld,\"rx_packets\":%ld,\"rx_ignored\":%ld,"
           "\"rx_malformed\":%ld,\"late_samples\":%ld,\"missing_ticks\":%ld,\"played_ticks\":%ld}}\n",
           samples / 8000.0, wall_s, opt.speed, rtp.tx_packets, rtp.rx_packets, rtp.rx_ignored, rtp.rx_malformed, rtp.late_samples,
           rtp.missing_ticks, rtp.played_ticks);
    fflush(stdout);
}

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

static void usage(void)
{
    fprintf(stderr, "usage: g711_receiver -f rx.tif [-l HOST:PORT] [-s SPEED] [-e] [-c A|U] [-p PT] [-D DELAY_MS] [-i IDENT]\n"
                    "                     [-T VIRTUAL_S] [-W WALL_S] [-d]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    opt.speed = 1;
    opt.law = G711_ALAW;
    opt.payload_type = -1;
    opt.delay_ms = 60;
    opt.ident = "FAXLINE-TEST-RX";
    opt.watchdog_virtual_s = 600;
    opt.watchdog_wall_s = 120;
    parse_addr("127.0.0.1:0", &opt.local);

    int c;
    while ((c = getopt(argc, argv, "f:l:s:ec:p:D:i:T:W:d")) != -1) {
        switch (c) {
        case 'f': opt.rx_file = optarg; break;
        case 'l': if (parse_addr(optarg, &opt.local) < 0) usage(); break;
        case 's': opt.speed = atof(optarg); break;
        case 'e': opt.ecm = 1; break;
        case 'c': opt.law = (optarg[0] == 'U' || optarg[0] == 'u') ? G711_ULAW : G711_ALAW; break;
        case 'p': opt.payload_type = atoi(optarg); break;
        case 'D': opt.delay_ms = atof(optarg); break;
        case 'i': opt.ident = optarg; break;
        case 'T': opt.watchdog_virtual_s = atof(optarg); break;
        case 'W': opt.watchdog_wall_s = atof(optarg); break;
        case 'd': opt.debug = 1; break;
        default: usage();
        }
    }
    if (opt.payload_type < 0)
        opt.payload_type = opt.law == G711_ALAW ? 8 : 0;
    if (opt.rx_file == NULL || opt.speed <= 0 || opt.delay_ms < 0 || opt.delay_ms * 8 > RING / 2)
        usage();
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, request_stop);
    signal(SIGINT, request_stop);
    srand((unsigned) time(NULL) ^ (unsigned) getpid());
    rtp.seq = (uint16_t) rand();
    rtp.ts = (uint32_t) rand();
    rtp.ssrc = (uint32_t) rand();

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

    codec = g711_init(NULL, opt.law);
    fax = fax_init(NULL, FALSE);
    t30 = fax_get_t30_state(fax);
    fax_set_transmit_on_idle(fax, TRUE);
    t30_set_tx_ident(t30, opt.ident);
    t30_set_rx_file(t30, opt.rx_file, -1);
    t30_set_ecm_capability(t30, opt.ecm);
    t30_set_supported_compressions(t30, T30_SUPPORT_T4_1D_COMPRESSION | T30_SUPPORT_T4_2D_COMPRESSION | T30_SUPPORT_T6_COMPRESSION);
    t30_set_phase_b_handler(t30, phase_b_handler, NULL);
    t30_set_phase_d_handler(t30, phase_d_handler, NULL);
    t30_set_phase_e_handler(t30, phase_e_handler, NULL);
    if (opt.debug) {
        int level = SPAN_LOG_SHOW_SEVERITY | SPAN_LOG_SHOW_PROTOCOL | SPAN_LOG_SHOW_SAMPLE_TIME | SPAN_LOG_FLOW;
        span_log_set_level(t30_get_logging_state(t30), level);
        span_log_set_level(fax_get_logging_state(fax), level);
    }

    const double launched = now_s();
    double started = -1;
    const int64_t linger = 2 * 8000;
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
            for (;;) {
                uint8_t buf[MAX_DATAGRAM];
                struct sockaddr_in from;
                socklen_t from_len = sizeof(from);
                ssize_t n = recvfrom(sock, buf, sizeof(buf), 0, (struct sockaddr *) &from, &from_len);
                if (n < 0)
                    break;
                if (started < 0) {
                    started = now_s();
                    opt.remote = from;
                    opt.have_remote = 1;
                }
                if (from.sin_addr.s_addr != opt.remote.sin_addr.s_addr || from.sin_port != opt.remote.sin_port) {
                    rtp.rx_ignored++;
                    continue;
                }
                receive_packet(buf, (int) n);
            }
        }
        if (started < 0)
            continue;
        int64_t due = (int64_t) ((now_s() - started) * 8000.0 * opt.speed);
        while (samples + SAMPLES_PER_TICK <= due)
            tick();
        if (phase_e_code >= 0 && samples >= phase_e_at + linger) {
            exit_code = phase_e_code == T30_ERR_OK ? 0 : 1;
            break;
        }
        if (samples > (int64_t) (opt.watchdog_virtual_s * 8000)) {
            fprintf(stderr, "virtual-time watchdog: %.0f s\n", opt.watchdog_virtual_s);
            break;
        }
    }
    t30_terminate(t30);
    print_result(now_s() - launched);
    fax_free(fax);
    g711_free(codec);
    close(sock);
    return exit_code;
}
