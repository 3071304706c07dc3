/*
 * The wire formats of t31_modem's line: UDPTL (T.38 Annex A, ALIGNED PER, with redundancy) and
 * RTP carrying G.711 with a fixed playout delay. No SpanDSP state in here but its G.711 codec.
 *
 * UDPTL datagram: seq (2 bytes, big-endian), the primary IFP (length determinant + bytes), then
 * error recovery: 0x00 + count + the secondary IFPs, newest first (what we send), or FEC (parsed
 * on receive: only the primary is used). Missing packets are recovered from the secondaries of the
 * next datagram that arrives; late and repeated ones are dropped.
 *
 * RTP: 160 samples (20 ms) a packet; received audio is played at a fixed delay behind the first
 * packet, by RTP timestamp; a tick with nothing to play is reported so the modem gets a fill-in.
 */
#ifndef T31_MODEM_LINE_CODECS_H
#define T31_MODEM_LINE_CODECS_H

#include <stdint.h>
#include <spandsp.h>

#define UDPTL_MAX_DEPTH 8
#define UDPTL_MAX_IFP 1024

typedef struct {
    uint16_t tx_seq;
    uint8_t history[UDPTL_MAX_DEPTH][UDPTL_MAX_IFP];
    int history_len[UDPTL_MAX_DEPTH];
    int history_count;
    int rx_started;
    uint16_t rx_expected;
    long tx_datagrams, rx_datagrams, rx_recovered, rx_lost, rx_duplicates, rx_malformed;
} udptl_state_t;

/* Encodes `ifp` as the next datagram, with up to `depth` secondaries (fewer when the datagram would
   exceed `max_datagram`), into out; returns its length, or -1 when the IFP is too long. */
int udptl_encode(udptl_state_t *s, uint8_t *out, int out_size, const uint8_t *ifp, int len, int depth, int max_datagram);

typedef void (*udptl_deliver_t)(void *user_data, const uint8_t *ifp, int len, uint16_t seq);

/* Takes one received datagram and delivers its IFPs in order (recovered ones first). */
void udptl_receive(udptl_state_t *s, const uint8_t *buf, int len, udptl_deliver_t deliver, void *user_data);

#define RTP_RING 64000 /* 8 s of samples */

typedef struct {
    g711_state_t *codec;
    int payload_type;
    double delay_ms;
    uint16_t seq;
    uint32_t ts;
    uint32_t ssrc;
    int16_t ring[RTP_RING];
    uint8_t filled[RTP_RING];
    int have_base;
    int64_t base;
    uint32_t first_ts;
    uint32_t remote_ssrc;
    long tx_packets, rx_packets, rx_ignored, rx_malformed, late_samples, missing_ticks;
} rtp_state_t;

void rtp_init(rtp_state_t *s, int law, double delay_ms);

/* Takes one received RTP packet; `now` is the line's sample clock. */
void rtp_receive(rtp_state_t *s, const uint8_t *buf, int len, int64_t now);

/* Fills amp with the `n` samples due at sample `now`; returns 0 when none had arrived. */
int rtp_playout(rtp_state_t *s, int16_t *amp, int n, int64_t now);

typedef void (*rtp_send_t)(const uint8_t *buf, int len, void *user_data);

/* Encodes n samples as the next RTP packet and hands it to `send`. */
void rtp_send(rtp_state_t *s, const int16_t *amp, int n, rtp_send_t send, void *user_data);

#endif
