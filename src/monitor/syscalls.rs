//! System call numbers to names, for the thread sampler's `syscall` column: the calls a reader,
//! an I/O engine or a server waits in (read family, aio, io_uring, futex, sleeps, polls), per
//! architecture. Others print as `syscall_N`.

#[cfg(target_arch = "x86_64")]
const TABLE: &[(i64, &str)] = &[
    (0, "read"),
    (1, "write"),
    (3, "close"),
    (7, "poll"),
    (8, "lseek"),
    (9, "mmap"),
    (11, "munmap"),
    (16, "ioctl"),
    (17, "pread64"),
    (18, "pwrite64"),
    (19, "readv"),
    (20, "writev"),
    (23, "select"),
    (24, "sched_yield"),
    (34, "pause"),
    (35, "nanosleep"),
    (42, "connect"),
    (43, "accept"),
    (44, "sendto"),
    (45, "recvfrom"),
    (46, "sendmsg"),
    (47, "recvmsg"),
    (61, "wait4"),
    (74, "fsync"),
    (75, "fdatasync"),
    (187, "readahead"),
    (202, "futex"),
    (206, "io_setup"),
    (208, "io_getevents"),
    (209, "io_submit"),
    (221, "fadvise64"),
    (228, "clock_gettime"),
    (230, "clock_nanosleep"),
    (232, "epoll_wait"),
    (257, "openat"),
    (270, "pselect6"),
    (271, "ppoll"),
    (281, "epoll_pwait"),
    (288, "accept4"),
    (295, "preadv"),
    (327, "preadv2"),
    (333, "io_pgetevents"),
    (425, "io_uring_setup"),
    (426, "io_uring_enter"),
    (427, "io_uring_register"),
    (441, "epoll_pwait2"),
];

#[cfg(target_arch = "aarch64")]
const TABLE: &[(i64, &str)] = &[
    (0, "io_setup"),
    (2, "io_submit"),
    (4, "io_getevents"),
    (22, "epoll_pwait"),
    (29, "ioctl"),
    (56, "openat"),
    (57, "close"),
    (63, "read"),
    (64, "write"),
    (65, "readv"),
    (66, "writev"),
    (67, "pread64"),
    (68, "pwrite64"),
    (69, "preadv"),
    (72, "pselect6"),
    (73, "ppoll"),
    (82, "fsync"),
    (83, "fdatasync"),
    (98, "futex"),
    (101, "nanosleep"),
    (113, "clock_gettime"),
    (115, "clock_nanosleep"),
    (124, "sched_yield"),
    (202, "accept"),
    (203, "connect"),
    (206, "sendto"),
    (207, "recvfrom"),
    (211, "sendmsg"),
    (212, "recvmsg"),
    (213, "readahead"),
    (223, "fadvise64"),
    (242, "accept4"),
    (260, "wait4"),
    (286, "preadv2"),
    (292, "io_pgetevents"),
    (425, "io_uring_setup"),
    (426, "io_uring_enter"),
    (427, "io_uring_register"),
    (441, "epoll_pwait2"),
];

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const TABLE: &[(i64, &str)] = &[];

/// The name of system call `nr` on this architecture, if it is one the sampler knows.
pub fn name(nr: i64) -> Option<&'static str> {
    TABLE.iter().find(|(n, _)| *n == nr).map(|(_, s)| *s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn io_uring_enter_is_known() {
        assert_eq!(super::name(426), Some("io_uring_enter"));
        assert_eq!(super::name(-5), None);
    }
}
