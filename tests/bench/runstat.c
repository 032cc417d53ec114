/* runstat.c - runs a command and prints what it cost:
 *   runstat CMD [ARG...]   ->  "WALL USER SYS MAXRSS_KIB" on stderr
 * (seconds, and the child's peak resident set from getrusage), after the
 * command's own output.  Exits with the command's status.  A C helper
 * rather than /usr/bin/time, which a fresh machine may not have. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: runstat CMD [ARG...]\n");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror(argv[1]);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    /* waitpid + RUSAGE_CHILDREN (POSIX) rather than wait4, which the
     * Makefile's -D_POSIX_C_SOURCE hides: the one child is all it counts. */
    if (waitpid(pid, &status, 0) < 0 || getrusage(RUSAGE_CHILDREN, &ru) < 0)
        return 2;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    fprintf(stderr, "%.4f %.4f %.4f %ld\n", wall,
            (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6,
            (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6, ru.ru_maxrss);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}
