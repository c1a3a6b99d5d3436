/*
 * A stand-in for the node agent, compiled at test time so the real-systemd suite runs a real ELF.
 *   <agent> version      prints "test-agent version <AGENT_VERSION>"
 *   <agent> recover ...  (only when built with UPGRADER_SCRIPT) runs the upgrader's recover, as a
 *                        self-hosted agent that embeds the upgrader would
 *   <agent> anything     runs as a daemon until SIGTERM; built with CRASH_AFTER_SECONDS=0 it
 *                        exits 1 at once (crash on start), with N > 0 it exits 1 after N s
 * With `--health-socket PATH` among its arguments the daemon serves HTTP on that unix socket:
 * every request is answered 200, or 503 while the file PATH.fail-<AGENT_VERSION> exists, so a
 * test can make one version's health probe fail without touching the others.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#ifndef AGENT_VERSION
#define AGENT_VERSION "0.0.0"
#endif
#ifndef CRASH_AFTER_SECONDS
#define CRASH_AFTER_SECONDS (-1)
#endif

static volatile sig_atomic_t stopping = 0;

static void on_term(int signal_number) {
  (void)signal_number;
  stopping = 1;
}

static const char *health_socket(int argc, char **argv) {
  for (int index = 1; index + 1 < argc; index++)
    if (strcmp(argv[index], "--health-socket") == 0) return argv[index + 1];
  return NULL;
}

/* Listens on a unix socket (one a previous run left is replaced); -1 when it cannot. */
static int listen_on(const char *path) {
  struct sockaddr_un address;
  if (strlen(path) >= sizeof(address.sun_path)) return -1;
  memset(&address, 0, sizeof(address));
  address.sun_family = AF_UNIX;
  strcpy(address.sun_path, path);
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return -1;
  unlink(path);
  if (bind(listener, (struct sockaddr *)&address, sizeof(address)) != 0 || listen(listener, 8) != 0) {
    close(listener);
    return -1;
  }
  return listener;
}

/* One request: its head is read (bounded by size and a second), then 200 or 503, then close. */
static void answer(int listener, const char *fail_path) {
  int client = accept(listener, NULL, NULL);
  if (client < 0) return;
  struct timeval limit = {1, 0};
  setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  char head[2048];
  size_t used = 0;
  while (used < sizeof(head) - 1) {
    ssize_t got = read(client, head + used, sizeof(head) - 1 - used);
    if (got <= 0) break;
    used += (size_t)got;
    head[used] = '\0';
    if (strstr(head, "\r\n\r\n") != NULL) break;
  }
  const char *reply = access(fail_path, F_OK) == 0
                          ? "HTTP/1.0 503 Service Unavailable\r\nContent-Length: 8\r\nConnection: close\r\n\r\nfailing\n"
                          : "HTTP/1.0 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n";
  ssize_t sent = write(client, reply, strlen(reply));
  (void)sent;
  close(client);
}

static double monotonic_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* The daemon: serves health if asked, crashes when built to, until SIGTERM. */
static int run(const char *socket_path) {
  char fail_path[4096];
  int listener = -1;
  if (socket_path != NULL) {
    snprintf(fail_path, sizeof(fail_path), "%s.fail-%s", socket_path, AGENT_VERSION);
    listener = listen_on(socket_path);
    if (listener < 0) perror("test-agent: health socket");
  }
  const double started = monotonic_seconds();
  while (!stopping) {
    if (CRASH_AFTER_SECONDS > 0 && monotonic_seconds() - started >= CRASH_AFTER_SECONDS) {
      fprintf(stderr, "test-agent %s: crashing after %d s\n", AGENT_VERSION, CRASH_AFTER_SECONDS);
      return 1;
    }
    if (listener >= 0) {
      struct pollfd ready = {listener, POLLIN, 0};
      if (poll(&ready, 1, 100) > 0) answer(listener, fail_path);
    } else if (CRASH_AFTER_SECONDS > 0) {
      usleep(100000);
    } else {
      pause();
    }
  }
  /* The socket stays: the next run replaces it, and unlinking here could race a restart's bind. */
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "version") == 0) {
    printf("test-agent version %s\n", AGENT_VERSION);
    return 0;
  }
#ifdef UPGRADER_SCRIPT
  if (argc > 1 && strcmp(argv[1], "recover") == 0) {
    char *args[64];
    int count = 0;
    args[count++] = UPGRADER_NODE;
    args[count++] = UPGRADER_SCRIPT;
    for (int index = 1; index < argc && count < 63; index++) args[count++] = argv[index];
    args[count] = NULL;
    execv(UPGRADER_NODE, args);
    perror("execv upgrader");
    return 127;
  }
#endif
  signal(SIGTERM, on_term);
  if (CRASH_AFTER_SECONDS == 0) {
    fprintf(stderr, "test-agent %s: crashing on start\n", AGENT_VERSION);
    return 1;
  }
  return run(health_socket(argc, argv));
}
