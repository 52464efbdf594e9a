/* Preloaded into `plugtop run` under valgrind by scripts/cost.sh: valgrind
 * keeps the last real-time signal (SIGRTMAX) for itself and refuses a
 * handler for it (EINVAL), and plugtop refuses to start when it cannot catch
 * every signal that would end it. This makes that one installation succeed
 * without installing anything; every other call goes to the C library. A
 * few instructions at start-up, in both runs the script compares. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <string.h>

int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  static int (*real)(int, const struct sigaction *, struct sigaction *);
  if (!real) real = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
  if (sig == SIGRTMAX) {
    if (old) memset(old, 0, sizeof *old);
    return 0;
  }
  return real(sig, act, old);
}
