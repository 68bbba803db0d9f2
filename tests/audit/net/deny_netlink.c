// A launcher for the net audit tests (tests/audit/net/status_peers_test.cpp): runs
// $FEDSTAT_AUDIT_REAL_SERVER with this process's arguments after a seccomp filter that makes
// socket(AF_NETLINK, ...) fail with EAFNOSUPPORT — what systemd's RestrictAddressFamilies=AF_INET
// AF_INET6 AF_UNIX (a common hardening line) does, and what a container without NETLINK_SOCK_DIAG
// looks like to the server. x86-64 Linux only (from the network review of issue 39). Not part of
// the product.
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const char* real = getenv("FEDSTAT_AUDIT_REAL_SERVER");
  if (real == NULL || argc < 1) return 127;
  {
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EAFNOSUPPORT & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {(unsigned short)(sizeof(filter) / sizeof(filter[0])), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
      perror("seccomp");
      return 127;
    }
  }
  argv[0] = (char*)real;
  execv(real, argv);
  perror("execv");
  return 127;
}
