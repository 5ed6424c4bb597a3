/* SPDX-License-Identifier: MIT */
/* The thread registry of reports (T<n>, creator, creation stack, name) and thread names from
 * /proc/self/task/TID/comm. A fixed table and raw system calls: it never allocates, and what
 * the fault handler reads it reads lock-free. */
#include "task.h"

#include <string.h>

#include "fmt.h"
#include "meta.h"
#include "os.h"
#include "sink.h"

#define COMM_CAP 32
/* Records kept, a power of two: thread T<n> has slot n % RECORDS, so when the table is full
 * a new thread takes the record of the oldest; exited threads keep theirs until then. 64
 * bytes a record, 64 KiB of metadata pages mapped at start-up and touched as threads are
 * created (not .bss: libhwtag's size moves where libc is loaded, and with it the stack
 * keys of the allocation fast path's cache, whose way hits bench/insns.py counts). */
#define RECORDS 1024u

enum record_state { STATE_CREATED = 1, STATE_RUNNING, STATE_EXITED };

/* One thread. seq is a sequence lock: 0 while the record is being (re)written, then its
 * number + 1; the other fields change later only through their owner, one word at a time
 * (a reader may see a name half-written: best effort). */
struct record {
    uint32_t seq;
    uint32_t parent; /* creator's number, HWT_TASK_NONE when not known */
    uint32_t stack;  /* depot id of the creation stack, 0 for none */
    uint32_t state;
    int32_t tid;        /* 0 until it runs */
    int32_t parent_tid; /* its tid before a fork made it a child's only thread, else 0 */
    uintptr_t handle;   /* pthread_t */
    char name[HWT_TASK_NAME_CAP];
    char pad[16];
};
_Static_assert(sizeof(struct record) == 64, "a record is a cache line");

static struct record *records;   /* RECORDS of them, from meta.c; NULL before start-up */
static uint32_t next_number = 1; /* T0 is the main thread */
/* The calling thread's number + 1, 0 while not known. */
static __thread uint32_t self_seq __attribute__((tls_model("initial-exec")));

/* The table, NULL before start-up (or when no metadata page could be had). signal-safe */
static struct record *table(void)
{
    return __atomic_load_n(&records, __ATOMIC_ACQUIRE);
}

static struct record *slot_of(uint32_t number)
{
    return &table()[number & (RECORDS - 1)];
}

/* The record of thread number while it still describes it, for its owner to update. */
static struct record *own(uint32_t number)
{
    if (table() == NULL || number == HWT_TASK_NONE)
        return NULL;
    struct record *rec = slot_of(number);
    if (__atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE) != number + 1)
        return NULL;
    return rec;
}

static void store_name(struct record *rec, const char *name)
{
    size_t i = 0;
    for (; i + 1 < sizeof(rec->name) && name[i] != '\0'; i++)
        __atomic_store_n(&rec->name[i], name[i], __ATOMIC_RELAXED);
    for (; i < sizeof(rec->name); i++)
        __atomic_store_n(&rec->name[i], '\0', __ATOMIC_RELAXED);
}

/* Writes a new record for a new number; returns it, or HWT_TASK_NONE. */
static uint32_t record_new(uint32_t parent, uint32_t stack, const char *name)
{
    if (table() == NULL)
        return HWT_TASK_NONE;
    uint32_t number = __atomic_fetch_add(&next_number, 1, __ATOMIC_RELAXED);
    if (number == HWT_TASK_NONE || number == 0) /* 2^32 threads: numbers are used up */
        return HWT_TASK_NONE;
    struct record *rec = slot_of(number);
    __atomic_store_n(&rec->seq, 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&rec->parent, parent, __ATOMIC_RELAXED);
    __atomic_store_n(&rec->stack, stack, __ATOMIC_RELAXED);
    __atomic_store_n(&rec->state, STATE_CREATED, __ATOMIC_RELAXED);
    __atomic_store_n(&rec->tid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&rec->parent_tid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&rec->handle, 0, __ATOMIC_RELAXED);
    store_name(rec, name);
    __atomic_store_n(&rec->seq, number + 1, __ATOMIC_RELEASE);
    return number;
}

/* A consistent copy of slot i; false when empty or rewritten meanwhile. signal-safe */
static bool record_copy(unsigned i, struct record *out)
{
    const struct record *rec = &table()[i];
    uint32_t seq = __atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE);
    if (seq == 0)
        return false;
    out->seq = seq;
    out->parent = __atomic_load_n(&rec->parent, __ATOMIC_RELAXED);
    out->stack = __atomic_load_n(&rec->stack, __ATOMIC_RELAXED);
    out->state = __atomic_load_n(&rec->state, __ATOMIC_RELAXED);
    out->tid = __atomic_load_n(&rec->tid, __ATOMIC_RELAXED);
    out->parent_tid = __atomic_load_n(&rec->parent_tid, __ATOMIC_RELAXED);
    out->handle = __atomic_load_n(&rec->handle, __ATOMIC_RELAXED);
    for (size_t c = 0; c < sizeof(out->name); c++)
        out->name[c] = __atomic_load_n(&rec->name[c], __ATOMIC_RELAXED);
    out->name[sizeof(out->name) - 1] = '\0';
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&rec->seq, __ATOMIC_RELAXED) == seq;
}

/* The newest record of thread tid (a tid is reused once its thread is gone). signal-safe */
static bool find_tid(int tid, struct record *out)
{
    struct record rec;
    bool found = false;
    if (tid <= 0 || table() == NULL)
        return false;
    for (unsigned i = 0; i < RECORDS; i++)
        if (record_copy(i, &rec) && (rec.tid == tid || rec.parent_tid == tid) &&
            (!found || rec.seq > out->seq)) {
            *out = rec;
            found = true;
        }
    return found;
}

static bool find_number(uint32_t number, struct record *out)
{
    return number != HWT_TASK_NONE && table() != NULL && record_copy(number & (RECORDS - 1), out) &&
           out->seq == number + 1;
}

/* /proc/self/task/<tid>/comm without its newline; false when the thread is gone. */
static bool read_comm(int tid, char *buf, size_t cap)
{
    char path[64];
    struct hwt_buf b;
    long n;
    int fd;

    hwt_fmt_init(&b, path, sizeof(path));
    hwt_fmt_printf(&b, "/proc/self/task/%d/comm", tid);
    fd = hwt_os_open_read(path);
    if (fd < 0)
        return false;
    n = hwt_os_read(fd, buf, cap - 1);
    hwt_os_close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    if (buf[n - 1] == '\n')
        buf[n - 1] = '\0';
    return buf[0] != '\0';
}

/* The live thread's name now, when it says more than the process name. */
static bool proc_name(int tid, const char *comm, char *buf, size_t cap)
{
    char main_name[COMM_CAP];

    if (tid <= 0 || cap < 2 || !read_comm(tid, buf, cap))
        return false;
    if (comm != NULL && strncmp(buf, comm, 15) == 0)
        return false; /* the kernel keeps 15 bytes of a name */
    if (tid != hwt_os_getpid() && read_comm(hwt_os_getpid(), main_name, sizeof(main_name)) &&
        strcmp(buf, main_name) == 0)
        return false;
    if (tid == hwt_os_getpid() && comm != NULL && comm[0] != '?')
        return strcmp(buf, "qemu-aarch64") != 0;
    return true;
}

/* A recorded name, when it says more than the process name. */
static bool kept_name(const struct record *rec, const char *comm, char *buf, size_t cap)
{
    if (rec->name[0] == '\0' || cap < 2 || (comm != NULL && strncmp(rec->name, comm, 15) == 0))
        return false;
    size_t n = strlen(rec->name);
    if (n > cap - 1)
        n = cap - 1;
    memcpy(buf, rec->name, n);
    buf[n] = '\0';
    return true;
}

/* A thread that is gone has its kept name; a live one its name now (a prctl(PR_SET_NAME)
 * goes by the registry), else the kept one. */
static bool record_name(const struct record *rec, int tid, const char *comm, char *buf, size_t cap)
{
    if (rec->state == STATE_EXITED)
        return kept_name(rec, comm, buf, cap);
    return proc_name(tid, comm, buf, cap) || kept_name(rec, comm, buf, cap);
}

bool hwt_task_thread_name(int tid, const char *comm, char *buf, size_t cap)
{
    struct record rec;
    if (find_tid(tid, &rec))
        return record_name(&rec, tid, comm, buf, cap);
    return proc_name(tid, comm, buf, cap);
}

void hwt_task_init_main(uintptr_t handle)
{
    struct record *t = hwt_meta_alloc(RECORDS * sizeof(struct record), 64);
    if (t == NULL)
        return; /* no registry: reports say nothing of threads' origins */
    __atomic_store_n(&records, t, __ATOMIC_RELEASE);
    struct record *rec = slot_of(0);
    int pid = hwt_os_getpid();
    __atomic_store_n(&rec->parent, HWT_TASK_NONE, __ATOMIC_RELAXED);
    __atomic_store_n(&rec->state, STATE_RUNNING, __ATOMIC_RELAXED);
    __atomic_store_n(&rec->tid, pid, __ATOMIC_RELAXED);
    if (hwt_os_gettid() == pid) { /* init runs on the main thread, as it should */
        __atomic_store_n(&rec->handle, handle, __ATOMIC_RELAXED);
        self_seq = 1;
    }
    __atomic_store_n(&rec->seq, 1, __ATOMIC_RELEASE);
}

/* The calling thread's number; one it did not see start (a raw clone, a thread of a
 * library that started before it) gets a record with no creator. */
static uint32_t self_number(void)
{
    if (self_seq != 0)
        return self_seq - 1;
    int tid = hwt_os_gettid();
    struct record rec;
    if (tid == hwt_os_getpid() && find_number(0, &rec) && rec.tid == tid) {
        self_seq = 1;
        return 0;
    }
    uint32_t number = record_new(HWT_TASK_NONE, 0, "");
    struct record *own_rec = own(number);
    if (own_rec == NULL)
        return HWT_TASK_NONE;
    __atomic_store_n(&own_rec->tid, tid, __ATOMIC_RELAXED);
    __atomic_store_n(&own_rec->state, STATE_RUNNING, __ATOMIC_RELAXED);
    self_seq = number + 1;
    return number;
}

uint32_t hwt_task_create(uint32_t stack)
{
    uint32_t parent = self_number();
    struct record rec;
    /* the kernel gives a new thread its creator's name */
    if (!find_number(parent, &rec))
        rec.name[0] = '\0';
    return record_new(parent, stack, rec.name);
}

void hwt_task_created(uint32_t number, bool ok, uintptr_t handle)
{
    struct record *rec = own(number);
    if (rec == NULL)
        return;
    if (ok)
        __atomic_store_n(&rec->handle, handle, __ATOMIC_RELAXED);
    else
        __atomic_store_n(&rec->seq, 0, __ATOMIC_RELEASE);
}

void hwt_task_start(uint32_t number, uintptr_t handle)
{
    struct record *rec = own(number);
    if (rec == NULL)
        return;
    self_seq = number + 1;
    __atomic_store_n(&rec->handle, handle, __ATOMIC_RELAXED);
    __atomic_store_n(&rec->tid, hwt_os_gettid(), __ATOMIC_RELAXED);
    __atomic_store_n(&rec->state, STATE_RUNNING, __ATOMIC_RELEASE);
}

void hwt_task_exit(uint32_t number)
{
    struct record *rec = own(number);
    char name[HWT_TASK_NAME_CAP];
    if (rec == NULL)
        return;
    /* its last name, however it was given (prctl too): it will be gone from /proc */
    if (proc_name(hwt_os_gettid(), hwt_sink_comm(), name, sizeof(name)))
        store_name(rec, name);
    __atomic_store_n(&rec->state, STATE_EXITED, __ATOMIC_RELEASE);
}

void hwt_task_named(uintptr_t handle, const char *name)
{
    struct record rec, *target = NULL;
    uint32_t newest = 0;
    if (table() == NULL)
        return;
    for (unsigned i = 0; i < RECORDS; i++)
        if (record_copy(i, &rec) && rec.handle == handle && rec.state != STATE_EXITED &&
            rec.seq > newest) {
            newest = rec.seq;
            target = &table()[i];
        }
    if (target != NULL)
        store_name(target, name);
}

void hwt_task_after_fork_child(void)
{
    int tid = hwt_os_gettid();
    if (table() == NULL)
        return;
    /* only the slots numbers were given: a page of the table the parent never touched costs
     * the child a fault to read (16 of a fork's 456 under QEMU) */
    uint32_t used = __atomic_load_n(&next_number, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < RECORDS && (used >= RECORDS || i < used); i++) {
        struct record *rec = &table()[i];
        uint32_t seq = __atomic_load_n(&rec->seq, __ATOMIC_RELAXED);
        if (seq == 0)
            continue;
        if (seq == self_seq) {
            __atomic_store_n(&rec->parent_tid, rec->tid, __ATOMIC_RELAXED);
            __atomic_store_n(&rec->tid, tid, __ATOMIC_RELAXED);
        } else if (__atomic_load_n(&rec->state, __ATOMIC_RELAXED) != STATE_EXITED) {
            __atomic_store_n(&rec->state, STATE_EXITED, __ATOMIC_RELAXED);
        }
    }
}

static void to_task(const struct record *rec, struct hwt_task *out)
{
    out->number = rec->seq - 1;
    out->parent = rec->parent;
    out->stack = rec->stack;
    out->tid = rec->tid;
    out->tid_before_fork = rec->parent_tid;
    out->exited = rec->state == STATE_EXITED;
    memcpy(out->name, rec->name, sizeof(out->name));
}

bool hwt_task_find_tid(int tid, struct hwt_task *out)
{
    struct record rec;
    if (!find_tid(tid, &rec))
        return false;
    to_task(&rec, out);
    return true;
}

bool hwt_task_find_number(uint32_t number, struct hwt_task *out)
{
    struct record rec;
    if (!find_number(number, &rec))
        return false;
    to_task(&rec, out);
    return true;
}

bool hwt_task_name(const struct hwt_task *t, const char *comm, char *buf, size_t cap)
{
    struct record rec;
    rec.state = t->exited ? STATE_EXITED : STATE_RUNNING;
    memcpy(rec.name, t->name, sizeof(rec.name));
    return record_name(&rec, t->tid, comm, buf, cap);
}
