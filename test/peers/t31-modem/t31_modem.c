/*
 * t31_modem: a Class 1 fax modem on a pseudo-terminal whose telephone line is T.38 (UDPTL over
 * UDP) or G.711 (RTP over UDP), built on Debian's libspandsp 0.0.6 (its T.31 AT interpreter and
 * modems). It lets a fax program that drives a real modem, such as efax (Ed Casas' own T.30, the
 * Debian package `efax`), fax to and from Faxline over SIP: the program talks AT commands on the
 * pty, the fax flows over the wire, and SIPp (test/interop/sipp) keeps the SIP dialog. The T.30
 * then belongs to the program, not to SpanDSP: a second, independent T.30 in the interop tests
 * (test/interop/efax-reception.test.ts).
 *
 * Start-up: it opens a pty (and keeps its slave side open, in raw mode, so that the program may
 * open and close it), binds a UDP socket and prints
 *     PTY /dev/pts/N
 *     LISTENING <port>
 * on stdout. The program's ATD is answered at once as connected (the SIP call is placed by the
 * test; "DIALED <number>" on stdout says when); the line's clock starts with the first datagram
 * from the far end (Faxline answers and sends first), whose source becomes where we send. As the
 * answering side (a program waiting with efax -r), the first datagram rings the program ("RING"),
 * and its ATA answers.
 *
 * The line runs on a virtual clock SPEED times faster than real time, as Faxline's line does
 * (lines.clockSpeed): both ends must run at the same speed. The program on the pty runs in real
 * time; what it waits for arrives sooner, so its own timeouts only grow more generous. Its real-time
 * pauses (efax waits a second after CONNECT before it sends a page) become SPEED times longer on
 * the line: the modem fills them as a real modem would (fill bits, or the flags of an HDLC frame).
 *
 * When the program hangs up (ATH, or +FCLASS=0 / ATZ after a call), the modem keeps ticking for
 * 2 s of virtual time (so the last frames go out), prints one line
 *     RESULT {"code":0,"text":"hung up by the DTE",...}
 * and exits 0; 3 when a watchdog or SIGTERM/SIGINT ended it first.
 *
 * Flow control: SpanDSP's T.31 keeps 4096 bytes of the program's data; at 3072 it asks to hold
 * (CTS off) and we stop reading the pty until it asks for more, so the program's writes block in
 * the pty as they would on a modem's hardware flow control.
 *
 * SpanDSP 0.0.6 bug, worked around here: in T.38 mode, src/t31.c bit-reverses received non-ECM
 * image data into a second buffer and then hands the *unreversed* buffer to the program (efax then
 * finds "18 lines, 18 errors"). We wrap the T.38 core's data handler and reverse the non-ECM data
 * fields before T.31 sees them, so that what it hands on is right. (Only a program that receives
 * non-ECM pages over T.38 meets this; a sender's TCF and pages go the other way.)
 *
 * Usage: t31_modem [-m t38|g711] [-l HOST:PORT] [-s SPEED] [-R DEPTH] [-M MAXDATAGRAM] [-c A|U]
 *                  [-D DELAY_MS] [-T VIRTUAL_S] [-W WALL_S] [-d]
 *   -m  the line: T.38 over UDPTL (default) or G.711 over RTP
 *   -l  local address (default 127.0.0.1:0: any free port)
 *   -s  virtual clock multiplier (default 1: real time)
 *   -R  UDPTL redundancy depth (default 3)
 *   -M  largest UDPTL datagram we send, bytes (default 400)
 *   -c  G.711 A-law (payload type 8, default) or µ-law (0)
 *   -D  G.711 playout delay behind the first packet, virtual ms (default 60 ms, or 40 ms of wall time
 *       x SPEED when that is more: what a loaded machine's scheduling jitter needs)
 *   -T  watchdog in virtual seconds after the line's clock started (default 600)
 *   -W  watchdog in wall seconds from the start (default 120)
 *   -d  SpanDSP FLOW logs and the AT dialogue on stderr
 *
 * Built by scripts/build-native.sh; started by test/interop/t31-modem-peer.ts.
 */
#define _GNU_SOURCE
#define SPANDSP_EXPOSE_INTERNAL_STRUCTURES
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <tiffio.h>
#include <spandsp.h>

#include "line_codecs.h"

#define SAMPLES_PER_TICK 160
#define MAX_DATAGRAM 2048
/* Bytes of the program's data given to T.31 at once: below its 1024 bytes of room past the
   high tide at which it asks to hold. */
#define DTE_CHUNK 256
#define LINGER_SAMPLES (2 * 8000)

static struct {
    int t38;
    struct sockaddr_in local;
    double speed;
    int depth;
    int max_datagram;
    int law;
    double delay_ms;
    double watchdog_virtual_s;
    double watchdog_wall_s;
    int debug;
} opt = {1, {0}, 1.0, 3, 400, G711_ALAW, -1, 600, 120, 0};

static int sock = -1;
static int pty_master = -1;
static t31_state_t *modem;
static struct sockaddr_in remote;
static int have_remote;
static int64_t samples;
static double started = -1;
static volatile sig_atomic_t stop_requested;

/* The call as the program sees it. */
static struct {
    int cts; /* 1: T.31 takes more data */
    int dialed;
    int answering; /* waiting for the first datagram to ring */
    int rang;
    int off_hook;
    int64_t hung_up_at; /* -1 until the program hangs up after a call */
    char number[64];
    long dte_rx_bytes, dte_tx_bytes;
    long reversed_non_ecm_bytes;
} dte = {1, 0, 0, 0, 0, -1, "", 0, 0, 0};

static udptl_state_t udptl;
static rtp_state_t rtp;

static t38_rx_data_handler_t *t31_rx_data_handler;

static void request_stop(int signo)
{
    (void) signo;
    stop_requested = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void say(const char *line)
{
    fputs(line, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

/* ---- the pty ---------------------------------------------------------------------------------- */

/* Writes all of buf to the pty (the program reads its responses and frames from the slave). */
static void pty_write(const uint8_t *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(pty_master, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                struct pollfd pfd = {pty_master, POLLOUT, 0};
                poll(&pfd, 1, 1000);
                continue;
            }
            return;
        }
        buf += n;
        len -= (size_t) n;
        dte.dte_tx_bytes += n;
    }
}

static int at_tx_handler(at_state_t *s, void *user_data, const uint8_t *buf, size_t len)
{
    (void) s;
    (void) user_data;
    if (opt.debug && len > 0 && buf[0] != 0xFF && buf[0] != 0x10)
        fprintf(stderr, "%8.2f modem: %.*s\n", samples / 8000.0, (int) len, (const char *) buf);
    pty_write(buf, len);
    return 0;
}

/* Reads what the program wrote, in chunks T.31 has room for, while it does not ask us to hold. */
static void pty_read(void)
{
    while (dte.cts) {
        char buf[DTE_CHUNK];
        ssize_t n = read(pty_master, buf, sizeof(buf));
        if (n <= 0)
            return;
        dte.dte_rx_bytes += n;
        if (opt.debug && modem->at_state.at_rx_mode != AT_MODE_STUFFED && modem->at_state.at_rx_mode != AT_MODE_HDLC)
            fprintf(stderr, "%8.2f dte:   %.*s\n", samples / 8000.0, (int) n, buf);
        t31_at_rx(modem, buf, (int) n);
    }
}

static int open_pty(char *name, size_t name_size)
{
    pty_master = posix_openpt(O_RDWR | O_NOCTTY);
    if (pty_master < 0 || grantpt(pty_master) < 0 || unlockpt(pty_master) < 0)
        return -1;
    if (ptsname_r(pty_master, name, name_size) != 0)
        return -1;
    /* The slave stays open here: the program may open and close it without the master seeing a
       hang-up, and it starts raw (the program sets its own modes anyway). */
    int slave = open(name, O_RDWR | O_NOCTTY);
    if (slave < 0)
        return -1;
    struct termios tio;
    if (tcgetattr(slave, &tio) == 0) {
        cfmakeraw(&tio);
        tcsetattr(slave, TCSANOW, &tio);
    }
    fcntl(pty_master, F_SETFL, fcntl(pty_master, F_GETFL) | O_NONBLOCK);
    return 0;
}

/* ---- T.31's modem control --------------------------------------------------------------------- */

static int modem_control(t31_state_t *s, void *user_data, int op, const char *num)
{
    (void) user_data;
    char line[128];
    switch (op) {
    case AT_MODEM_CONTROL_CALL:
        /* The SIP call is the test's: the line is there as soon as the far end speaks, and until
           then the modem waits for the answering side's V.21, as after a real dial. */
        snprintf(dte.number, sizeof(dte.number), "%s", num != NULL ? num : "");
        dte.dialed = 1;
        dte.off_hook = 1;
        snprintf(line, sizeof(line), "DIALED %s", dte.number);
        say(line);
        t31_call_event(s, AT_CALL_EVENT_CONNECTED);
        break;
    case AT_MODEM_CONTROL_ANSWER:
        dte.off_hook = 1;
        t31_call_event(s, AT_CALL_EVENT_ANSWERED);
        say("ANSWERED");
        break;
    case AT_MODEM_CONTROL_OFFHOOK:
        dte.off_hook = 1;
        break;
    case AT_MODEM_CONTROL_HANGUP:
    case AT_MODEM_CONTROL_ONHOOK:
        if (dte.off_hook && dte.hung_up_at < 0) {
            dte.hung_up_at = samples;
            say("HUNG UP");
        }
        dte.off_hook = 0;
        break;
    case AT_MODEM_CONTROL_CTS:
        dte.cts = (int) (intptr_t) num;
        break;
    default:
        break;
    }
    return 0;
}

/* ---- the T.38 line ---------------------------------------------------------------------------- */

static void send_datagram(const uint8_t *buf, int len)
{
    if (have_remote)
        sendto(sock, buf, (size_t) len, 0, (struct sockaddr *) &remote, sizeof(remote));
}

static int tx_packet_handler(t38_core_state_t *core, void *user_data, const uint8_t *ifp, int len, int count)
{
    (void) core;
    (void) user_data;
    uint8_t out[MAX_DATAGRAM];
    int n = udptl_encode(&udptl, out, sizeof(out), ifp, len, opt.depth, opt.max_datagram);
    if (n < 0)
        return -1;
    for (int i = 0; i < count; i++)
        send_datagram(out, n);
    return 0;
}

/* The bug workaround (see the top of this file): T.31 hands non-ECM data on unreversed, so it is
   given reversed data. */
static int rx_data_workaround(t38_core_state_t *core, void *user_data, int data_type, int field_type, const uint8_t *buf, int len)
{
    if ((field_type == T38_FIELD_T4_NON_ECM_DATA || field_type == T38_FIELD_T4_NON_ECM_SIG_END) && len > 0) {
        uint8_t reversed[MAX_DATAGRAM];
        if (len > (int) sizeof(reversed))
            len = (int) sizeof(reversed);
        bit_reverse(reversed, buf, len);
        dte.reversed_non_ecm_bytes += len;
        return t31_rx_data_handler(core, user_data, data_type, field_type, reversed, len);
    }
    return t31_rx_data_handler(core, user_data, data_type, field_type, buf, len);
}

static void deliver_ifp(void *user_data, const uint8_t *ifp, int len, uint16_t seq)
{
    (void) user_data;
    t38_core_rx_ifp_packet(t31_get_t38_core_state(modem), ifp, len, seq);
}

/* ---- the G.711 line --------------------------------------------------------------------------- */

static void send_rtp(const uint8_t *buf, int len, void *user_data)
{
    (void) user_data;
    send_datagram(buf, len);
}

/* ---- the clock -------------------------------------------------------------------------------- */

static void tick(void)
{
    if (opt.t38) {
        t31_t38_send_timeout(modem, SAMPLES_PER_TICK);
    } else {
        int16_t rx[SAMPLES_PER_TICK];
        if (rtp_playout(&rtp, rx, SAMPLES_PER_TICK, samples))
            t31_rx(modem, rx, SAMPLES_PER_TICK);
        else
            t31_rx_fillin(modem, SAMPLES_PER_TICK);
        int16_t tx[SAMPLES_PER_TICK];
        int n = t31_tx(modem, tx, SAMPLES_PER_TICK);
        if (n < SAMPLES_PER_TICK)
            memset(tx + n, 0, sizeof(int16_t) * (size_t) (SAMPLES_PER_TICK - n));
        rtp_send(&rtp, tx, SAMPLES_PER_TICK, send_rtp, NULL);
    }
    samples += SAMPLES_PER_TICK;
}

static void on_datagram(const uint8_t *buf, int len, const struct sockaddr_in *from)
{
    if (started < 0) {
        started = now_s();
        remote = *from;
        have_remote = 1;
        if (!dte.dialed) {
            /* Someone calls: ring the program, which answers with ATA. */
            dte.rang = 1;
            t31_call_event(modem, AT_CALL_EVENT_ALERTING);
        }
    }
    if (from->sin_addr.s_addr != remote.sin_addr.s_addr || from->sin_port != remote.sin_port)
        return;
    if (opt.t38)
        udptl_receive(&udptl, buf, len, deliver_ifp, NULL);
    else
        rtp_receive(&rtp, buf, len, samples);
}

/* ---- main ------------------------------------------------------------------------------------- */

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
    fprintf(stderr, "usage: t31_modem [-m t38|g711] [-l HOST:PORT] [-s SPEED] [-R DEPTH] [-M MAXDATAGRAM] [-c A|U] [-D DELAY_MS] [-T VIRTUAL_S] [-W WALL_S] [-d]\n");
    exit(2);
}

static void print_result(int code, const char *text, double wall_s)
{
    printf("RESULT {\"code\":%d,\"text\":\"%s\",\"line\":\"%s\",\"dialed\":\"%s\",\"rang\":%s,"
           "\"dte_rx_bytes\":%ld,\"dte_tx_bytes\":%ld,\"reversed_non_ecm_bytes\":%ld,\"virtual_s\":%.2f,\"wall_s\":%.2f,",
           code, text, opt.t38 ? "t38" : "g711", dte.number, dte.rang ? "true" : "false", dte.dte_rx_bytes, dte.dte_tx_bytes,
           dte.reversed_non_ecm_bytes, samples / 8000.0, wall_s);
    if (opt.t38)
        printf("\"udptl\":{\"tx_datagrams\":%ld,\"rx_datagrams\":%ld,\"rx_recovered\":%ld,\"rx_lost\":%ld,\"rx_duplicates\":%ld}}\n",
               udptl.tx_datagrams, udptl.rx_datagrams, udptl.rx_recovered, udptl.rx_lost, udptl.rx_duplicates);
    else
        printf("\"rtp\":{\"tx_packets\":%ld,\"rx_packets\":%ld,\"rx_ignored\":%ld,\"late_samples\":%ld,\"missing_ticks\":%ld}}\n",
               rtp.tx_packets, rtp.rx_packets, rtp.rx_ignored, rtp.late_samples, rtp.missing_ticks);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    parse_addr("127.0.0.1:0", &opt.local);
    int c;
    while ((c = getopt(argc, argv, "m:l:s:R:M:c:D:T:W:d")) != -1) {
        switch (c) {
        case 'm':
            if (strcmp(optarg, "t38") == 0)
                opt.t38 = 1;
            else if (strcmp(optarg, "g711") == 0)
                opt.t38 = 0;
            else
                usage();
            break;
        case 'l':
            if (parse_addr(optarg, &opt.local) < 0)
                usage();
            break;
        case 's':
            opt.speed = atof(optarg);
            break;
        case 'R':
            opt.depth = atoi(optarg);
            break;
        case 'M':
            opt.max_datagram = atoi(optarg);
            break;
        case 'c':
            opt.law = optarg[0] == 'U' || optarg[0] == 'u' ? G711_ULAW : G711_ALAW;
            break;
        case 'D':
            opt.delay_ms = atof(optarg);
            break;
        case 'T':
            opt.watchdog_virtual_s = atof(optarg);
            break;
        case 'W':
            opt.watchdog_wall_s = atof(optarg);
            break;
        case 'd':
            opt.debug = 1;
            break;
        default:
            usage();
        }
    }
    if (opt.speed <= 0 || opt.depth < 0 || opt.depth > UDPTL_MAX_DEPTH)
        usage();
    if (opt.delay_ms < 0)
        opt.delay_ms = 60 > 40 * opt.speed ? 60 : 40 * opt.speed;
    signal(SIGTERM, request_stop);
    signal(SIGINT, request_stop);
    signal(SIGPIPE, SIG_IGN);

    char pty_name[128];
    if (open_pty(pty_name, sizeof(pty_name)) < 0) {
        fprintf(stderr, "cannot open a pseudo-terminal: %s\n", strerror(errno));
        return 2;
    }
    sock = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    if (sock < 0 || bind(sock, (struct sockaddr *) &opt.local, sizeof(opt.local)) < 0) {
        fprintf(stderr, "cannot bind: %s\n", strerror(errno));
        return 2;
    }
    struct sockaddr_in bound;
    socklen_t bound_len = sizeof(bound);
    getsockname(sock, (struct sockaddr *) &bound, &bound_len);
    char line[256];
    snprintf(line, sizeof(line), "PTY %s", pty_name);
    say(line);
    snprintf(line, sizeof(line), "LISTENING %d", ntohs(bound.sin_port));
    say(line);

    modem = t31_init(NULL, at_tx_handler, NULL, modem_control, NULL, opt.t38 ? tx_packet_handler : NULL, NULL);
    if (modem == NULL) {
        fprintf(stderr, "cannot start the T.31 modem\n");
        return 2;
    }
    if (opt.t38) {
        t31_set_mode(modem, TRUE);
        t31_set_t38_config(modem, FALSE);
        t38_core_state_t *core = t31_get_t38_core_state(modem);
        t38_set_t38_version(core, 0);
        t31_rx_data_handler = core->rx_data_handler;
        core->rx_data_handler = rx_data_workaround;
    } else {
        t31_set_transmit_on_idle(modem, TRUE);
        rtp_init(&rtp, opt.law, opt.delay_ms);
    }
    if (opt.debug) {
        int level = SPAN_LOG_SHOW_SEVERITY | SPAN_LOG_SHOW_PROTOCOL | SPAN_LOG_SHOW_SAMPLE_TIME | SPAN_LOG_FLOW;
        span_log_set_level(t31_get_logging_state(modem), level);
        span_log_set_level(&modem->at_state.logging, level);
        if (opt.t38)
            span_log_set_level(t38_core_get_logging_state(t31_get_t38_core_state(modem)), level);
    }

    const double launched = now_s();
    int exit_code = 3;
    const char *text = "stopped";
    for (;;) {
        double now = now_s();
        if (stop_requested) {
            text = "stopped by signal";
            break;
        }
        if (now - launched > opt.watchdog_wall_s) {
            fprintf(stderr, "wall-clock watchdog: %.0f s\n", opt.watchdog_wall_s);
            text = "wall-clock watchdog";
            break;
        }
        int timeout_ms = 100;
        if (started >= 0) {
            double next_tick_at = started + (double) (samples + SAMPLES_PER_TICK) / (8000.0 * opt.speed);
            double wait = next_tick_at - now;
            timeout_ms = wait <= 0 ? 0 : (int) (wait * 1000) + 1;
        }
        struct pollfd pfd[2] = {{sock, POLLIN, 0}, {pty_master, dte.cts ? POLLIN : 0, 0}};
        poll(pfd, 2, timeout_ms);
        if (pfd[0].revents & POLLIN) {
            for (;;) {
                uint8_t buf[MAX_DATAGRAM];
                struct sockaddr_in from;
                socklen_t from_len = sizeof(from);
                ssize_t n = recvfrom(sock, buf, sizeof(buf), 0, (struct sockaddr *) &from, &from_len);
                if (n < 0)
                    break;
                on_datagram(buf, (int) n, &from);
            }
        }
        if (pfd[1].revents & POLLIN)
            pty_read();
        if (started < 0)
            continue;
        int64_t due = (int64_t) ((now_s() - started) * 8000.0 * opt.speed);
        while (samples + SAMPLES_PER_TICK <= due) {
            tick();
            /* The program's data and commands are taken between ticks, as they arrive. */
            if (dte.cts)
                pty_read();
        }
        if (dte.hung_up_at >= 0 && samples >= dte.hung_up_at + LINGER_SAMPLES) {
            exit_code = 0;
            text = "hung up by the DTE";
            break;
        }
        if (samples > (int64_t) (opt.watchdog_virtual_s * 8000)) {
            fprintf(stderr, "virtual-time watchdog: %.0f s\n", opt.watchdog_virtual_s);
            text = "virtual-time watchdog";
            break;
        }
    }
    print_result(exit_code, text, now_s() - launched);
    t31_free(modem);
    close(sock);
    close(pty_master);
    return exit_code;
}
