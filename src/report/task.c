/* SPDX-License-Identifier: MIT */
/* Thread names from /proc/self/task/TID/comm (raw open/read/close, fixed buffers). */
#include "task.h"

#include <string.h>

#include "fmt.h"
#include "os.h"

#define COMM_CAP 32

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

bool hwt_task_thread_name(int tid, const char *comm, char *buf, size_t cap)
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
