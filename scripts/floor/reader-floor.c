/* The least a cpuplugd-like daemon can do each interval, for comparing
 * `plugtop run` with it (scripts/cost-floor.sh): read /proc/stat,
 * /proc/meminfo, /proc/vmstat, /proc/loadavg and the online CPU list below
 * ROOT, read and rewrite cmm_pages, sleep a second. No parsing, no rules.
 * MODE "kept" holds the kernel files open and re-reads them at offset 0
 * (as plugtop does on procfs and sysfs); "reopen" opens each one anew (as
 * plugtop does on plain files, such as a simulated kernel's). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char buf[65536];
static const char *files[] = {"proc/stat", "proc/meminfo", "proc/vmstat", "proc/loadavg",
                              "sys/devices/system/cpu/online"};
#define NFILES (sizeof files / sizeof files[0])

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  int root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int kept = strcmp(argv[2], "kept") == 0;
  int fds[NFILES];
  if (root < 0) return 1;
  for (unsigned i = 0; i < NFILES; i++)
    fds[i] = kept ? openat(root, files[i], O_RDONLY | O_CLOEXEC) : -1;
  for (;;) {
    for (unsigned i = 0; i < NFILES; i++) {
      if (kept) {
        if (pread(fds[i], buf, sizeof buf, 0) < 0) return 1;
      } else {
        int fd = openat(root, files[i], O_RDONLY | O_CLOEXEC | O_NOATIME);
        if (fd < 0) return 1;
        if (read(fd, buf, sizeof buf) < 0) return 1;
        close(fd);
      }
    }
    int pool = openat(root, argv[3], O_RDWR | O_CLOEXEC);
    if (pool >= 0) {
      ssize_t n = read(pool, buf, sizeof buf);
      if (n > 0 && pwrite(pool, buf, (size_t)n, 0) < 0) return 1;
      close(pool);
    }
    struct timespec second = {1, 0};
    nanosleep(&second, NULL);
  }
}
