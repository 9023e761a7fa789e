/* bare.c — the least a program can do per read, as a reference for benches/vs_fio_jobs.sh.
 *
 * Uniform random reads of one block size over a whole file or block device with O_DIRECT:
 * psync (pread, depth 1) or libaio (io_submit one read per freed slot, io_getevents for at
 * least one), N threads each with its own descriptor, for S seconds; prints the IOPS of all
 * threads. No clocks per read, no histogram, no verification: what is left is the kernel's cost
 * and the machine's.
 *
 *   cc -O2 -pthread -o bare benches/bare.c
 *   bare psync|libaio DEPTH BS THREADS SECONDS PATH
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int use_aio, depth, nthreads;
static long long bs, blocks;
static double seconds;
static const char *path;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static long long next_offset(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (long long)(*x % (uint64_t)blocks) * bs;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void *worker(void *arg)
{
    uint64_t x = 88172645463325252ull ^ ((uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull);
    int fd = open(path, O_RDONLY | O_DIRECT);
    if (fd < 0)
        die(path);
    char *buf;
    if (posix_memalign((void **)&buf, 4096, bs * depth))
        die("posix_memalign");
    long long *done = calloc(1, sizeof *done);
    double end = now() + seconds;
    if (!use_aio) {
        do {
            if (pread(fd, buf, bs, next_offset(&x)) != bs)
                die("pread");
            ++*done;
        } while (now() < end);
        return done;
    }
    aio_context_t ctx = 0;
    struct iocb *cb = calloc(depth, sizeof *cb);
    struct io_event *ev = calloc(depth, sizeof *ev);
    if (syscall(SYS_io_setup, depth, &ctx))
        die("io_setup");
    for (int i = 0; i < depth; i++) {
        struct iocb *p = &cb[i];
        p->aio_data = i;
        p->aio_lio_opcode = IOCB_CMD_PREAD;
        p->aio_fildes = fd;
        p->aio_buf = (uint64_t)(uintptr_t)(buf + bs * i);
        p->aio_nbytes = bs;
        p->aio_offset = next_offset(&x);
        if (syscall(SYS_io_submit, ctx, 1, &p) != 1)
            die("io_submit");
    }
    do {
        long got = syscall(SYS_io_getevents, ctx, 1, depth, ev, NULL);
        if (got < 0)
            die("io_getevents");
        for (long k = 0; k < got; k++) {
            struct iocb *p = &cb[ev[k].data];
            if (ev[k].res != bs)
                die("short read");
            ++*done;
            p->aio_offset = next_offset(&x);
            if (syscall(SYS_io_submit, ctx, 1, &p) != 1)
                die("io_submit");
        }
    } while (now() < end);
    return done;
}

int main(int argc, char **argv)
{
    if (argc != 7 || (strcmp(argv[1], "psync") && strcmp(argv[1], "libaio"))) {
        fprintf(stderr, "usage: bare psync|libaio DEPTH BS THREADS SECONDS PATH\n");
        return 2;
    }
    use_aio = !strcmp(argv[1], "libaio");
    depth = use_aio ? atoi(argv[2]) : 1;
    bs = atoll(argv[3]);
    nthreads = atoi(argv[4]);
    seconds = atof(argv[5]);
    path = argv[6];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die(path);
    blocks = lseek(fd, 0, SEEK_END) / bs;
    close(fd);
    if (depth < 1 || bs < 512 || nthreads < 1 || seconds <= 0 || blocks < 1) {
        fprintf(stderr, "bare: bad arguments\n");
        return 2;
    }
    pthread_t t[nthreads];
    double t0 = now();
    for (long i = 0; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i))
            die("pthread_create");
    long long total = 0;
    for (int i = 0; i < nthreads; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += *(long long *)r;
    }
    printf("%.0f\n", total / (now() - t0));
    return 0;
}
