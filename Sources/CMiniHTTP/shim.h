// Linux system calls and constants that Swift's Glibc module does not export.
#ifndef CMINIHTTP_SHIM_H
#define CMINIHTTP_SHIM_H

#include <errno.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static inline int mh_accept4(int fd, struct sockaddr *addr, socklen_t *len) {
    return accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

static inline int mh_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int mh_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

static inline int mh_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}

static inline uint32_t mh_event_flags(const struct epoll_event *ev) { return ev->events; }
static inline uint64_t mh_event_data(const struct epoll_event *ev) { return ev->data.u64; }

static const uint32_t MH_EPOLLIN = EPOLLIN;
static const uint32_t MH_EPOLLOUT = EPOLLOUT;
static const uint32_t MH_EPOLLERR = EPOLLERR;
static const uint32_t MH_EPOLLHUP = EPOLLHUP;
static const uint32_t MH_EPOLLRDHUP = EPOLLRDHUP;
static const uint32_t MH_EPOLLEXCLUSIVE = EPOLLEXCLUSIVE;

static inline uint64_t mh_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/// Names the calling thread (the kernel keeps 15 bytes).
static inline void mh_set_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

#endif
