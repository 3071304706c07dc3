/*
 * UDPTL and RTP/G.711 for t31_modem (see line_codecs.h).
 */
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <tiffio.h>
#include "line_codecs.h"

/* ---- UDPTL ------------------------------------------------------------------------------------ */

static int put_length(uint8_t *buf, int len)
{
    if (len < 0x80) {
        buf[0] = (uint8_t) len;
        return 1;
    }
    buf[0] = (uint8_t) (0x80 | (len >> 8));
    buf[1] = (uint8_t) (len & 0xFF);
    return 2;
}

/* The bytes the length determinant at buf[at] took, or -1 (fragmented lengths are never used for
   IFPs). */
static int get_length(const uint8_t *buf, int len, int at, int *value)
{
    if (at >= len)
        return -1;
    if ((buf[at] & 0x80) == 0) {
        *value = buf[at];
        return 1;
    }
    if ((buf[at] & 0xC0) == 0x80 && at + 1 < len) {
        *value = ((buf[at] & 0x3F) << 8) | buf[at + 1];
        return 2;
    }
    return -1;
}

static int encode_with(const udptl_state_t *s, uint8_t *out, const uint8_t *ifp, int len, int secondaries)
{
    int at = 0;
    out[at++] = (uint8_t) (s->tx_seq >> 8);
    out[at++] = (uint8_t) (s->tx_seq & 0xFF);
    at += put_length(out + at, len);
    memcpy(out + at, ifp, (size_t) len);
    at += len;
    out[at++] = 0x00; /* error-recovery: secondary-ifp-packets */
    at += put_length(out + at, secondaries);
    for (int i = 0; i < secondaries; i++) {
        at += put_length(out + at, s->history_len[i]);
        memcpy(out + at, s->history[i], (size_t) s->history_len[i]);
        at += s->history_len[i];
    }
    return at;
}

int udptl_encode(udptl_state_t *s, uint8_t *out, int out_size, const uint8_t *ifp, int len, int depth, int max_datagram)
{
    if (len > UDPTL_MAX_IFP)
        return -1;
    int secondaries = depth < s->history_count ? depth : s->history_count;
    /* Worst case of each part: 2-byte length determinants. */
    int room = 2 + 2 + len + 1 + 2;
    for (int i = 0; i < secondaries; i++)
        room += 2 + s->history_len[i];
    while (secondaries > 0 && room > out_size) {
        secondaries--;
        room -= 2 + s->history_len[secondaries];
    }
    if (room > out_size)
        return -1;
    int n = encode_with(s, out, ifp, len, secondaries);
    while (n > max_datagram && secondaries > 0)
        n = encode_with(s, out, ifp, len, --secondaries);
    s->tx_seq++;
    s->tx_datagrams++;
    memmove(&s->history[1], &s->history[0], sizeof(s->history[0]) * (UDPTL_MAX_DEPTH - 1));
    memmove(&s->history_len[1], &s->history_len[0], sizeof(s->history_len[0]) * (UDPTL_MAX_DEPTH - 1));
    memcpy(s->history[0], ifp, (size_t) len);
    s->history_len[0] = len;
    if (s->history_count < UDPTL_MAX_DEPTH)
        s->history_count++;
    return n;
}

void udptl_receive(udptl_state_t *s, const uint8_t *buf, int len, udptl_deliver_t deliver, void *user_data)
{
    s->rx_datagrams++;
    if (len < 3) {
        s->rx_malformed++;
        return;
    }
    uint16_t seq = (uint16_t) ((buf[0] << 8) | buf[1]);
    int at = 2;
    int primary_len;
    int k = get_length(buf, len, at, &primary_len);
    if (k < 0 || at + k + primary_len > len) {
        s->rx_malformed++;
        return;
    }
    at += k;
    const uint8_t *primary = buf + at;
    at += primary_len;

    const uint8_t *secondary[16];
    int secondary_len[16];
    int n_secondary = 0;
    if (at < len && buf[at] == 0x00) {
        at++;
        int count;
        if ((k = get_length(buf, len, at, &count)) < 0) {
            s->rx_malformed++;
            return;
        }
        at += k;
        for (int i = 0; i < count; i++) {
            int l;
            if ((k = get_length(buf, len, at, &l)) < 0 || at + k + l > len) {
                s->rx_malformed++;
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
    }
    if (!s->rx_started) {
        s->rx_started = 1;
        s->rx_expected = seq;
    }
    uint16_t ahead = (uint16_t) (seq - s->rx_expected);
    if (ahead >= 0x8000) {
        s->rx_duplicates++;
        return;
    }
    /* Recover the gap, oldest first: secondary[i] carries seq - 1 - i. */
    for (int gap = ahead; gap >= 1; gap--) {
        if (gap - 1 < n_secondary) {
            deliver(user_data, secondary[gap - 1], secondary_len[gap - 1], (uint16_t) (seq - gap));
            s->rx_recovered++;
        } else {
            s->rx_lost++;
        }
    }
    deliver(user_data, primary, primary_len, seq);
    s->rx_expected = (uint16_t) (seq + 1);
}

/* ---- RTP / G.711 ------------------------------------------------------------------------------ */

void rtp_init(rtp_state_t *s, int law, double delay_ms)
{
    memset(s, 0, sizeof(*s));
    s->codec = g711_init(NULL, law);
    s->payload_type = law == G711_ULAW ? 0 : 8;
    s->delay_ms = delay_ms;
    s->ssrc = (uint32_t) time(NULL) ^ (uint32_t) getpid();
}

void rtp_receive(rtp_state_t *s, const uint8_t *buf, int len, int64_t now)
{
    if (len < 12 || (buf[0] >> 6) != 2) {
        s->rx_malformed++;
        return;
    }
    int at = 12 + (buf[0] & 0x0F) * 4;
    if (buf[0] & 0x10) {
        if (len < at + 4) {
            s->rx_malformed++;
            return;
        }
        at += 4 + ((buf[at + 2] << 8) | buf[at + 3]) * 4;
    }
    int end = len;
    if (buf[0] & 0x20)
        end -= buf[len - 1];
    if (at > end) {
        s->rx_malformed++;
        return;
    }
    int pt = buf[1] & 0x7F;
    uint32_t ts = ((uint32_t) buf[4] << 24) | ((uint32_t) buf[5] << 16) | ((uint32_t) buf[6] << 8) | buf[7];
    uint32_t ssrc = ((uint32_t) buf[8] << 24) | ((uint32_t) buf[9] << 16) | ((uint32_t) buf[10] << 8) | buf[11];
    /* RTCP (payload types 72-76 with the marker bit's position) and other streams are not ours. */
    if (pt != s->payload_type || (s->rx_packets > 0 && ssrc != s->remote_ssrc)) {
        s->rx_ignored++;
        return;
    }
    if (s->rx_packets == 0)
        s->remote_ssrc = ssrc;
    s->rx_packets++;
    int16_t linear[2048];
    int n = g711_decode(s->codec, linear, buf + at, end - at > 2048 ? 2048 : end - at);
    if (!s->have_base) {
        s->have_base = 1;
        s->base = now + (int64_t) (s->delay_ms * 8);
        s->first_ts = ts;
    }
    int64_t pos = s->base + (int32_t) (ts - s->first_ts);
    for (int i = 0; i < n; i++, pos++) {
        if (pos < now || pos >= now + RTP_RING) {
            s->late_samples++;
            continue;
        }
        s->ring[pos % RTP_RING] = linear[i];
        s->filled[pos % RTP_RING] = 1;
    }
}

int rtp_playout(rtp_state_t *s, int16_t *amp, int n, int64_t now)
{
    int got = 0;
    for (int i = 0; i < n; i++) {
        int64_t pos = now + i;
        if (s->filled[pos % RTP_RING]) {
            amp[i] = s->ring[pos % RTP_RING];
            s->filled[pos % RTP_RING] = 0;
            got++;
        } else {
            amp[i] = 0;
        }
    }
    if (got == 0)
        s->missing_ticks++;
    return got > 0;
}

void rtp_send(rtp_state_t *s, const int16_t *amp, int n, rtp_send_t send, void *user_data)
{
    uint8_t out[12 + 1024];
    if (n > 1024)
        n = 1024;
    out[0] = 0x80;
    out[1] = (uint8_t) ((s->tx_packets == 0 ? 0x80 : 0) | s->payload_type);
    out[2] = (uint8_t) (s->seq >> 8);
    out[3] = (uint8_t) s->seq;
    out[4] = (uint8_t) (s->ts >> 24);
    out[5] = (uint8_t) (s->ts >> 16);
    out[6] = (uint8_t) (s->ts >> 8);
    out[7] = (uint8_t) s->ts;
    out[8] = (uint8_t) (s->ssrc >> 24);
    out[9] = (uint8_t) (s->ssrc >> 16);
    out[10] = (uint8_t) (s->ssrc >> 8);
    out[11] = (uint8_t) s->ssrc;
    int bytes = g711_encode(s->codec, out + 12, amp, n);
    s->seq++;
    s->ts += (uint32_t) n;
    s->tx_packets++;
    send(out, 12 + bytes, user_data);
}
