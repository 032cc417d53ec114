/* pdio_fs.h - the file-system steps behind pdio_batch: system calls that a
 * test can make fail (PDTRANS_FAIL_AT), durable folders, and pdtrans's own
 * temporary names.  Internal to src/io. */
#ifndef PDT_PDIO_FS_H
#define PDT_PDIO_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads PDTRANS_FAIL_AT=KIND:N once (KIND is create, write, fsync, link or
 * rename): the N-th call of that kind in this process then fails with EIO.
 * Reads PDTRANS_KILL_AT=KIND:N too (KIND also unlink): the process then
 * kills itself (SIGKILL) just before the N-th call of that kind.
 * Returns false (message printed) when the value is malformed. */
bool fs_fault_init(void);

/* The calls a batch makes; each counts towards PDTRANS_FAIL_AT. */
int fs_create_temp(char *templ);               /* mkstemp */
int fs_open_stream(const char *path);          /* open for writing, no create */
bool fs_write_all(int fd, const uint8_t *data, size_t len);
int fs_fsync(int fd);
int fs_link(const char *from, const char *to);
int fs_rename(const char *from, const char *to);
/* Counted only for PDTRANS_KILL_AT (backups and journals of a set that is
 * in); PDTRANS_FAIL_AT does not take unlink. */
int fs_unlink(const char *path);

/* fsyncs a folder so that renames in it survive a crash.  File systems
 * that cannot fsync a folder (EINVAL) count as success.  0 or -1 (errno). */
int fs_fsync_folder(const char *dir, bool counted);

/* The folder part of PATH ("." when there is none); malloc'd. */
char *fs_folder_of(const char *path);

/* The file PATH names once symbolic links are followed (at most 40, as
 * Linux allows); malloc'd, or NULL with errno set (ENOENT for a dangling
 * link, ELOOP). */
char *fs_follow_links(const char *path);

/* "DIR/.BASE.pdtrans-KIND-PID-XXXXXX" for the target PATH; KIND is "tmp"
 * or "bak".  malloc'd. */
char *fs_temp_template(const char *path, const char *kind);
/* The backup name that goes with temporary TMP (same PID and suffix). */
char *fs_backup_name(const char *tmp);

/* True if NAME (a folder entry) has pdtrans's temporary or backup naming;
 * *pid is the process that made it. */
bool fs_is_own_temp(const char *name, long *pid);
/* Removes temporaries and backups in DIR left by pdtrans processes that
 * no longer run (killed mid-write). */
void fs_remove_stale(const char *dir);

#endif
