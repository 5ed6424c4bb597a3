/* SPDX-License-Identifier: MIT */
/* "loopback": a TCP client and server in one process over 127.0.0.1 (ephemeral port), each
 * allocating a buffer per message as the kernel allocates an skb per packet; sizes mix small
 * messages with ones of >= 32 KiB (page order >= 3) so that HWTAG_SAMPLE matters. The message
 * count and a wall-clock limit bound every run. It talks to no other address. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include "bench_common.h"

struct msg_hdr {
    uint32_t size;
    uint32_t seq;
};

/* Per-message bookkeeping the server allocates besides the payload, like struct sk_buff. */
#define META_SIZE 232

struct cfg {
    long msgs;
    size_t small_lo, small_hi, large_lo, large_hi;
    unsigned large_pct;
    uint64_t seed;
    double max_secs;
};

static struct cfg cfg = {20000, 64, 2048, 32768, 131072, 20, 42, 60.0};
static int listen_fd = -1;
static volatile uint64_t server_sum;
static volatile long server_msgs;

static int recv_all(int fd, void *p, size_t n)
{
    char *c = p;
    while (n > 0) {
        ssize_t r = recv(fd, c, n, 0);
        if (r <= 0)
            return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

static int send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static void *server(void *unused)
{
    (void)unused;
    int fd = accept(listen_fd, NULL, NULL);
    if (fd < 0)
        return NULL;
    uint64_t sum = 0;
    long n = 0;
    struct msg_hdr h;
    while (recv_all(fd, &h, sizeof(h)) == 0 && h.size > 0) {
        char *meta = malloc(META_SIZE);
        char *buf = malloc(h.size);
        if (!meta || !buf)
            abort();
        memset(meta, 0, META_SIZE);
        if (recv_all(fd, buf, h.size) != 0)
            break;
        /* Read the payload the way a protocol handler would look at it: header and tail. */
        sum += (unsigned char)buf[0] + (unsigned char)buf[h.size - 1] + h.seq;
        free(buf);
        free(meta);
        n++;
    }
    send_all(fd, &sum, sizeof(sum));
    server_sum = sum;
    server_msgs = n;
    close(fd);
    return NULL;
}

static size_t msg_size(uint64_t *s)
{
    if (bench_rand(s) % 100 < cfg.large_pct)
        return bench_logsize(s, cfg.large_lo, cfg.large_hi);
    return bench_logsize(s, cfg.small_lo, cfg.small_hi);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char m[] = "bench_loopback: time limit reached\n";
    bench_write_all(2, m, sizeof(m) - 1);
    _exit(3);
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--msgs"))
            cfg.msgs = atol(v);
        else if (!strcmp(k, "--small"))
            sscanf(v, "%zu:%zu", &cfg.small_lo, &cfg.small_hi);
        else if (!strcmp(k, "--large"))
            sscanf(v, "%zu:%zu", &cfg.large_lo, &cfg.large_hi);
        else if (!strcmp(k, "--large-pct"))
            cfg.large_pct = (unsigned)atoi(v);
        else if (!strcmp(k, "--seed"))
            cfg.seed = strtoull(v, NULL, 0);
        else if (!strcmp(k, "--max-secs"))
            cfg.max_secs = atof(v);
        else {
            fprintf(stderr, "usage: bench_loopback [--msgs N] [--small LO:HI] [--large LO:HI] "
                            "[--large-pct P] [--seed N] [--max-secs S]\n");
            return 2;
        }
    }
    signal(SIGALRM, on_alarm);
    alarm((unsigned)cfg.max_secs + 1);

    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0; /* the kernel picks a free ephemeral port */
    socklen_t alen = sizeof(a);
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(listen_fd, 1) != 0 || getsockname(listen_fd, (struct sockaddr *)&a, &alen) != 0) {
        perror("bench_loopback: listen");
        return 1;
    }
    pthread_t st;
    if (pthread_create(&st, NULL, server, NULL) != 0)
        return 1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        perror("bench_loopback: connect");
        return 1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

    uint64_t s = cfg.seed, sum = 0, bytes = 0;
    long large = 0;
    double t0 = bench_now();
    for (long i = 0; i < cfg.msgs; i++) {
        size_t n = msg_size(&s);
        large += n >= cfg.large_lo;
        char *buf = malloc(n);
        if (!buf)
            abort();
        /* Fill the whole payload: the sender builds what it sends. */
        memset(buf, (int)(i & 0xff), n);
        struct msg_hdr h = {(uint32_t)n, (uint32_t)i};
        if (send_all(fd, &h, sizeof(h)) != 0 || send_all(fd, buf, n) != 0) {
            perror("bench_loopback: send");
            return 1;
        }
        sum += (unsigned char)buf[0] + (unsigned char)buf[n - 1] + (uint32_t)i;
        bytes += n;
        free(buf);
    }
    struct msg_hdr end = {0, 0};
    send_all(fd, &end, sizeof(end));
    uint64_t peer = 0;
    if (recv_all(fd, &peer, sizeof(peer)) != 0 || peer != sum) {
        fprintf(stderr, "bench_loopback: checksum mismatch\n");
        return 1;
    }
    double secs = bench_now() - t0;
    pthread_join(st, NULL);
    close(fd);
    close(listen_fd);
    printf("RESULT msgs=%ld large_msgs=%ld bytes=%llu secs=%.6f mbit_per_s=%.2f "
           "msgs_per_s=%.1f\n",
           cfg.msgs, large, (unsigned long long)bytes, secs, (double)bytes * 8 / secs / 1e6,
           (double)cfg.msgs / secs);
    bench_print_hwtag_stats();
    return 0;
}
